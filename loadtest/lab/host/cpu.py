"""CPU time and memory of the services and of the whole machine, read from Linux's /proc.

The lab samples right before and right after each measured ab run, so that the CPU seconds it reports
belong to that run alone (not to start-up, the pre-check or the warm-up). Everything runs on one box:
the services, ab and whatever else the machine is doing share its cores, so the machine's own busy time
is reported beside the services'.
"""

import os
import resource
import time
from dataclasses import dataclass, field
from typing import Dict, List, Mapping, Optional, Tuple, Union

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def process_cpu_ticks(stat_text: str) -> int:
    """utime + stime of a process (all its threads) from the text of /proc/<pid>/stat."""
    # The command name (field 2) is in parentheses and may contain spaces: split after the last ')'.
    fields = stat_text[stat_text.rindex(")") + 2 :].split()
    # fields[0] is field 3 (state), so utime (field 14) and stime (field 15) are at 11 and 12.
    return int(fields[11]) + int(fields[12])


def machine_cpu_ticks(proc_stat_text: str) -> Tuple[int, int]:
    """(busy, total) ticks of all cores from the text of /proc/stat: busy = total - idle - iowait."""
    for line in proc_stat_text.splitlines():
        if line.startswith("cpu "):
            # user nice system idle iowait irq softirq steal; guest time is already counted in user.
            values = [int(v) for v in line.split()[1:9]]
            total = sum(values)
            return total - values[3] - values[4], total
    raise ValueError("/proc/stat has no 'cpu ' line")


def machine_steal_ticks(proc_stat_text: str) -> int:
    """Steal ticks of all cores from /proc/stat: time this VM's cores wanted to run and the hypervisor ran another
    guest. A noisy neighbour shows here, not as our CPU."""
    for line in proc_stat_text.splitlines():
        if line.startswith("cpu "):
            return int(line.split()[8])
    raise ValueError("/proc/stat has no 'cpu ' line")


def peak_rss_kib(status_text: str) -> int:
    """VmHWM (the peak resident set size) in KiB from the text of /proc/<pid>/status."""
    for line in status_text.splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise ValueError("no VmHWM line in /proc/<pid>/status")


def current_rss_kib(status_text: str) -> int:
    """VmRSS (the resident set size now) in KiB from the text of /proc/<pid>/status."""
    for line in status_text.splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise ValueError("no VmRSS line in /proc/<pid>/status")


def process_io_chars(io_text: str) -> Tuple[int, int]:
    """(rchar, wchar) from the text of /proc/<pid>/io: the bytes the process passed through read(2) and write(2) and
    their vector forms (not recv(2) and send(2)), whatever the file: sockets, logs, /proc."""
    values = dict(line.split(":", 1) for line in io_text.splitlines() if ":" in line)
    try:
        return int(values["rchar"]), int(values["wchar"])
    except (KeyError, ValueError):
        raise ValueError("no rchar and wchar in /proc/<pid>/io") from None


@dataclass
class Sample:
    """The CPU counters at one moment."""

    wall_s: float
    process_ticks: Dict[str, int]
    machine_busy_ticks: int
    # CPU seconds of this Python process's finished children, i.e. of ab, from getrusage.
    children_cpu_s: float
    machine_steal_ticks: int = 0
    # (rchar, wchar) of the named processes, a name's replicas added up.
    process_io: Dict[str, Tuple[int, int]] = field(default_factory=dict)


def take_sample(pids: Mapping[str, Union[int, List[int]]]) -> Sample:
    """Reads the counters of the named processes (a name's replicas added up) and of the machine, now."""
    machine = _read("/proc/stat")
    return Sample(
        wall_s=time.monotonic(),
        process_ticks={
            name: sum(process_cpu_ticks(_read(f"/proc/{pid}/stat")) for pid in _listed(some))
            for name, some in pids.items()
        },
        machine_busy_ticks=machine_cpu_ticks(machine)[0],
        children_cpu_s=_children_cpu_seconds(),
        machine_steal_ticks=machine_steal_ticks(machine),
        process_io={
            name: _added(process_io_chars(_read(f"/proc/{pid}/io")) for pid in _listed(some))
            for name, some in pids.items()
        },
    )


def _added(pairs) -> Tuple[int, int]:
    pairs = list(pairs)
    return sum(pair[0] for pair in pairs), sum(pair[1] for pair in pairs)


def cpu_between(
    before: Sample, after: Sample, ticks_per_second: int = CLOCK_TICKS, generator: str = "ab"
) -> Dict[str, Dict]:
    """CPU seconds and percent (of one core: 200 % = two cores busy) of each process over the window.

    Besides the named processes: "ab" (the load generator, on the same box; `generator` names it), "machine" (all
    cores), "steal" (time the hypervisor gave another guest, counted busy by the machine but not ours) and "other"
    (machine minus the named processes, the load generator and steal: the lab's own Python and anything else).
    """
    wall = after.wall_s - before.wall_s

    def entry(seconds: float) -> Dict[str, Optional[float]]:
        return {"seconds": round(seconds, 3), "percent": round(seconds / wall * 100, 1) if wall > 0 else None}

    usage = {}
    for name, ticks in after.process_ticks.items():
        usage[name] = entry((ticks - before.process_ticks[name]) / ticks_per_second)
    ab_seconds = after.children_cpu_s - before.children_cpu_s
    machine_seconds = (after.machine_busy_ticks - before.machine_busy_ticks) / ticks_per_second
    services_seconds = sum(u["seconds"] or 0.0 for u in usage.values())
    steal_seconds = (after.machine_steal_ticks - before.machine_steal_ticks) / ticks_per_second
    usage[generator] = entry(ab_seconds)
    usage["machine"] = entry(machine_seconds)
    usage["steal"] = entry(steal_seconds)
    # Tick counters of processes and of the machine are sampled at slightly different moments, so a quiet
    # machine can come out a few ticks below zero here: that is noise, not negative load.
    usage["other"] = entry(max(0.0, machine_seconds - services_seconds - ab_seconds - steal_seconds))
    return usage


def reset_peak_rss(pid: int) -> bool:
    """Resets the process's VmHWM to its current RSS, so that the next reading is the peak of one run.

    Linux allows it to the process's owner (writing 5 to clear_refs); where it is refused, VmHWM stays
    the peak since the process started, and the caller records that.
    """
    try:
        with open(f"/proc/{pid}/clear_refs", "w") as handle:
            handle.write("5")
        return True
    except OSError:
        return False


def peak_rss_mib(pids: Union[int, List[int]]) -> float:
    """The peak RSS of a process, or of the largest of a service's replicas (each is a JVM of its own)."""
    return round(max(peak_rss_kib(_read(f"/proc/{pid}/status")) for pid in _listed(pids)) / 1024, 1)


def rss_mib(pids: Union[int, List[int]]) -> float:
    """The RSS now of a process, or of the largest of a service's replicas, as peak_rss_mib reads the peak."""
    return round(max(current_rss_kib(_read(f"/proc/{pid}/status")) for pid in _listed(pids)) / 1024, 1)


def children_cpu_seconds() -> float:
    """CPU seconds of this process's children that have finished and been waited for (getrusage)."""
    return _children_cpu_seconds()


def process_ticks(pid: int) -> int:
    """utime + stime of one running process now."""
    return process_cpu_ticks(_read(f"/proc/{pid}/stat"))


def alive(pid: int) -> bool:
    """Whether a process runs: one that exited but was not yet reaped by its parent is a zombie, not alive."""
    try:
        return _read(f"/proc/{pid}/stat").rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _listed(pids: Union[int, List[int]]) -> List[int]:
    return [pids] if isinstance(pids, int) else list(pids)


def load_average() -> Optional[Tuple[float, float, float]]:
    """The 1, 5 and 15 minute load averages: how busy the shared machine was before a run."""
    try:
        return os.getloadavg()
    except OSError:
        return None


def _children_cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _read(path: str) -> str:
    with open(path) as handle:
        return handle.read()
