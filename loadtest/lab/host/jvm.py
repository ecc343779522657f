"""A running JVM of this machine, through jcmd: a full collection, and the heap it keeps alive after one, the one
definition of "heap after GC" (the fault run's before and after, the soak's every minute)."""

import os
import subprocess
from typing import Callable, List, Optional

from ..core import metrics
from ..core.errors import LabError
from .processes import wait_until

# Micrometer's old generation after the latest major collection, and the count of major collections.
LIVE_DATA = "jvm_gc_live_data_size_bytes"
MAJOR_GCS = "jvm_gc_pause_seconds_count"
# How long a service may take to report the collection the lab asked for.
GC_REPORT_TIMEOUT_S = 10.0


def jcmd_of(pid: int) -> str:
    """The jcmd of the JDK a JVM runs on: beside its java, whatever JDK the stack chose."""
    return os.path.join(os.path.dirname(os.readlink("/proc/%d/exe" % pid)), "jcmd")


def jcmd(pid: int, command: str, timeout_s: float = 120) -> str:
    """jcmd PID COMMAND's output; a LabError saying what jcmd said when it fails."""
    try:
        done = subprocess.run(
            [jcmd_of(pid), str(pid), command],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=timeout_s,
        )
    except (OSError, subprocess.SubprocessError) as error:
        raise LabError("jcmd %d %s failed: %s" % (pid, command, error)) from None
    if done.returncode != 0:
        raise LabError("jcmd %d %s exited with code %d: %s" % (pid, command, done.returncode, done.stdout.strip()))
    return done.stdout


def heap_after_gc(pid: int, metrics_url: str, read: Callable[[str], List[metrics.Sample]] = metrics.scrape) -> float:
    """The bytes of the service's old generation right after a full collection the lab asked for (jcmd GC.run; with
    the serial collector a stop-the-world mark-compact of the whole heap), as the service reports it
    (jvm_gc_live_data_size_bytes, updated from the collection's notification a moment after jcmd returns): the heap it
    keeps alive. A leak grows it whatever the collector's own rhythm."""
    before = metrics.total(read(metrics_url), MAJOR_GCS, action="end of major GC")
    jcmd(pid, "GC.run", timeout_s=60)
    live: List[float] = []

    def reported() -> bool:
        samples = read(metrics_url)
        if metrics.total(samples, MAJOR_GCS, action="end of major GC") > before:
            live.append(metrics.total(samples, LIVE_DATA))
        return bool(live)

    if not wait_until(reported, GC_REPORT_TIMEOUT_S, 0.1):
        raise LabError("the service did not report the full collection within %g s" % GC_REPORT_TIMEOUT_S)
    return live[0]


def class_histogram(pid: int, target: str) -> Optional[str]:
    """The classes that hold the JVM's heap (jcmd GC.class_histogram) into target; its file name."""
    with open(target, "w") as handle:
        handle.write(jcmd(pid, "GC.class_histogram"))
    return os.path.basename(target)
