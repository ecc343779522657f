"""How long a local JVM's JIT compilers have worked, read from its performance counters (the hsperfdata file HotSpot
keeps in /tmp/hsperfdata_<user>/<pid>, as jstat reads it): no metrics page, no attach, nothing run in the JVM. The
floor's bare JVMs have no metrics page, so their warm-up watches the JIT this way."""

import os
import pwd
import struct
import time
from typing import Callable, Dict, List, Optional

# The header's magic number, and where its entries' offset and count are.
_MAGIC = 0xCAFEC0C0
_ENTRIES_AT = 24
# Compile time in ticks of the high-resolution clock, and the ticks a second.
_COMPILE = "java.ci.totalTime"
_FREQUENCY = "sun.os.hrt.frequency"


def perf_file(pid: int) -> str:
    """Where HotSpot keeps the process's counters: /tmp/hsperfdata_<its user>/<pid>."""
    try:
        user = pwd.getpwuid(os.stat("/proc/%d" % pid).st_uid).pw_name
    except (OSError, KeyError):
        user = pwd.getpwuid(os.getuid()).pw_name
    return os.path.join("/tmp", "hsperfdata_" + user, str(pid))


def counters(path: str, names: List[str]) -> Dict[str, int]:
    """The long counters of these names in an hsperfdata file (absent ones left out); OSError or ValueError when the
    file cannot be read as one."""
    with open(path, "rb") as handle:
        data = handle.read()
    magic, order = struct.unpack_from(">IB", data, 0)
    if magic != _MAGIC:
        raise ValueError("%s is not a HotSpot performance data file" % path)
    endian = "<" if order == 1 else ">"
    offset, count = struct.unpack_from(endian + "ii", data, _ENTRIES_AT)
    found = {}
    for _ in range(count):
        length, name_at, vector, kind, _flags, _units, _variability, data_at = struct.unpack_from(
            endian + "iiibbbbi", data, offset
        )
        name = data[offset + name_at : data.index(b"\0", offset + name_at)].decode("ascii", "replace")
        if name in names and kind == ord("J") and vector == 0:
            found[name] = struct.unpack_from(endian + "q", data, offset + data_at)[0]
        offset += length
    return found


def compile_seconds(pid: int) -> Optional[float]:
    """The seconds the JVM's JIT compilers have worked since it started; None when its counters cannot be read (a JVM
    started with -XX:-UsePerfData, or gone)."""
    try:
        found = counters(perf_file(pid), [_COMPILE, _FREQUENCY])
    except (OSError, ValueError, struct.error):
        return None
    if _COMPILE not in found or not found.get(_FREQUENCY):
        return None
    return found[_COMPILE] / found[_FREQUENCY]


def watch(pids: List[int], clock=time.monotonic) -> Callable[[], Optional[float]]:
    """A function that gives the largest share of the time since it was last asked that one of these JVMs' JIT
    compiled (None: a JVM's counters could not be read), as lab.measure.server_metrics.JitWatch does from metrics
    pages."""
    state = {"at": clock(), "compiled": [compile_seconds(pid) for pid in pids]}

    def busiest_share() -> Optional[float]:
        now, compiled = clock(), [compile_seconds(pid) for pid in pids]
        before, elapsed = state["compiled"], now - state["at"]
        state.update(at=now, compiled=compiled)
        if elapsed <= 0 or None in before or None in compiled:
            return None
        return max((after or 0.0) - (earlier or 0.0) for after, earlier in zip(compiled, before)) / elapsed

    return busiest_share
