"""The soak: an open-loop run of DURATION >= SOAK_MIN_S seconds also reports, per whole minute, each service's RSS,
its heap after a full collection and the path's p99, and whether each series stayed flat.

Each minute mark the lab reads every service's RSS (VmRSS), then has it run a full collection (`jcmd <pid> GC.run`;
with the serial collector a stop-the-world mark-compact of the whole heap) and reads Micrometer's
jvm_gc_live_data_size_bytes, the old generation after that collection: the heap the service keeps alive. A leak
grows it minute after minute whatever the collector's rhythm, which a passive reading after the collector's own
occasional full collections would sample too rarely to see. The minute's p99 is Vegeta's, of the ok answers due in it.

Flat: the median of the last third of the minutes (at least one) is within FLAT_LIMIT of the median of the first
third. The warm-up (WARMUP_SECONDS) ran before the first minute.
"""

import os
import statistics
import subprocess
import threading
import time
from typing import Any, Callable, Dict, List, Optional

from . import cpu, server_metrics
from .errors import MetricsError
from .processes import wait_until
from .settings import SOAK_MIN_S, Settings, soak_wanted

MINUTE_S = 60.0
# A shorter open-loop run has no whole minutes to compare.
FLAT_LIMIT = 0.10
LIVE_DATA = "jvm_gc_live_data_size_bytes"
MAJOR_GCS = "jvm_gc_pause_seconds_count"
# A run that ends this long before its last minute mark ended early: no minute is waited for.
FINISH_SLACK_S = 5.0
# How long a service may take to report the collection the lab asked for.
GC_REPORT_TIMEOUT_S = 10.0


def wanted(settings: Settings) -> bool:
    """Whether each measured run is a soak: an open loop of at least two whole minutes."""
    return soak_wanted(settings)


class MinuteSampler:
    """Reads the services' RSS and heap after a full collection at each whole minute of a run, in a thread of its own,
    from start() until the minutes are done (finish() waits for them) or stop() is called."""

    def __init__(
        self,
        services: Dict[str, Dict],
        duration_s: float,
        minute_s: float = MINUTE_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        # services: by name, {"pids": [...], "metrics_urls": [...]}.
        self.services = services
        self.minutes = int(duration_s // minute_s)
        self.minute_s = minute_s
        self.clock = clock
        self.rss_mib: Dict[str, List[Optional[float]]] = {name: [] for name in services}
        self.heap_after_gc_mib: Dict[str, List[Optional[float]]] = {name: [] for name in services}
        self.errors: List[str] = []
        # jcmd's CPU: a child of the lab, so the load generator's CPU (RUSAGE_CHILDREN) would count it otherwise.
        self.jcmd_cpu_s = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="soak-sampler", daemon=True)

    def start(self) -> None:
        self._started = self.clock()
        self._thread.start()

    def finish(self) -> None:
        """Waits for the last minute's reading when the run lasted until its mark; stops the sampler when the run
        ended well before it (the load generator failed)."""
        if self.clock() < self._started + self.minutes * self.minute_s - FINISH_SLACK_S:
            self._stop.set()
        self._thread.join()

    def stop(self) -> None:
        """Ends the sampling now, whatever minutes are left (the run ended early)."""
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        for minute in range(1, self.minutes + 1):
            if self._stop.wait(max(0.0, self._started + minute * self.minute_s - self.clock())):
                return
            for name, service in self.services.items():
                self.rss_mib[name].append(self._rss(name, service["pids"]))
                self.heap_after_gc_mib[name].append(self._heap_after_gc(name, service))

    def _rss(self, name: str, pids: List[int]) -> Optional[float]:
        try:
            return cpu.rss_mib(pids)
        except (OSError, ValueError) as error:
            self.errors.append("%s: no RSS: %s" % (name, error))
            return None

    def _heap_after_gc(self, name: str, service: Dict) -> Optional[float]:
        """The largest replica's old generation after a full collection the lab asked for, in MiB."""
        sizes = []
        for pid, url in zip(service["pids"], service["metrics_urls"]):
            try:
                sizes.append(self._collect(pid, url))
            except (OSError, MetricsError, subprocess.SubprocessError) as error:
                self.errors.append("%s: no heap after GC: %s" % (name, error))
                return None
        return round(max(sizes) / 2**20, 1) if sizes else None

    def _collect(self, pid: int, url: str) -> float:
        before = server_metrics.total(server_metrics.scrape(url), MAJOR_GCS, action="end of major GC")
        cpu_before = cpu.children_cpu_seconds()
        done = subprocess.run(
            [jcmd_of(pid), str(pid), "GC.run"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=60
        )
        self.jcmd_cpu_s += cpu.children_cpu_seconds() - cpu_before
        if done.returncode != 0:
            raise OSError("jcmd %d GC.run exited with code %d: %s" % (pid, done.returncode, done.stdout.strip()))
        # Micrometer updates the gauge from the collection's notification, a moment after jcmd returns.
        live: List[float] = []

        def reported() -> bool:
            samples = server_metrics.scrape(url)
            if server_metrics.total(samples, MAJOR_GCS, action="end of major GC") > before:
                live.append(server_metrics.total(samples, LIVE_DATA))
            return bool(live)

        if not wait_until(reported, GC_REPORT_TIMEOUT_S, 0.1):
            raise OSError("the service did not report the full collection within %g s" % GC_REPORT_TIMEOUT_S)
        return live[0]

    def series(self, per_minute: Dict) -> Dict:
        """Vegeta's per-minute figures (open_loop.Minutes) with the services' RSS and heap after GC beside them."""
        found = dict(
            per_minute,
            rss_mib=self.rss_mib,
            heap_after_gc_mib=self.heap_after_gc_mib,
            jcmd_cpu_s=round(self.jcmd_cpu_s, 3),
        )
        if self.errors:
            found["errors"] = self.errors[:10]
        return found


def jcmd_of(pid: int) -> str:
    """The jcmd of the JDK a JVM runs on: beside its java, whatever JDK the stack chose."""
    return os.path.join(os.path.dirname(os.readlink("/proc/%d/exe" % pid)), "jcmd")


def flatness(per_minute: Dict) -> List[Dict]:
    """Each series of a soak (p99, and each service's RSS and heap after GC) against FLAT_LIMIT: its first and last
    thirds' medians and the change between them; flat None when it has fewer than two minutes with a value."""
    rows = [_flat("p99_ms", None, per_minute.get("p99_ms") or [])]
    for series in ("rss_mib", "heap_after_gc_mib"):
        rows += [_flat(series, name, values) for name, values in (per_minute.get(series) or {}).items()]
    return rows


def _flat(series: str, service: Optional[str], values: List[Optional[float]]) -> Dict:
    present = [value for value in values if value is not None]
    row: Dict[str, Any] = {
        "series": series,
        "service": service,
        "minutes": len(present),
        "first": None,
        "last": None,
        "change_percent": None,
        "flat": None,
    }
    if len(present) < 2:
        return row
    third = max(1, len(present) // 3)
    first, last = statistics.median(present[:third]), statistics.median(present[-third:])
    change = (last - first) / first if first else None
    row.update(
        first=round(first, 3),
        last=round(last, 3),
        change_percent=None if change is None else round(change * 100, 1),
        flat=None if change is None else abs(change) <= FLAT_LIMIT,
    )
    return row


SERIES_NAMES = {"p99_ms": "p99 (ms)", "rss_mib": "RSS (MiB)", "heap_after_gc_mib": "heap after GC (MiB)"}
HOW = (
    "Soak (an open-loop run of at least %d s): per whole minute of the schedule, the requests due in it, their "
    "correct answers per second and p99; each service's RSS at the minute mark, and its heap after a full "
    "collection the lab asked for then (jcmd GC.run; Micrometer's jvm_gc_live_data_size_bytes). A series is flat "
    "when the median of its last third of minutes is within %d %% of the median of its first third."
    % (SOAK_MIN_S, round(FLAT_LIMIT * 100))
)


def tables(runs: List[Dict], run_name: Callable[[Dict], str], number: Callable) -> Optional[Dict]:
    """The report's soak tables: every minute of every soaked run, and each series' flatness; None without a soak."""
    soaked = [run for run in runs if run.get("per_minute")]
    if not soaked:
        return None
    services = list(dict.fromkeys(name for run in soaked for name in run["per_minute"].get("rss_mib") or {}))
    minute_rows, flat_rows = [], []
    for run in soaked:
        series = run["per_minute"]
        for index, sent in enumerate(series["sent"]):
            cells = [
                run_name(run),
                str(index + 1),
                str(sent),
                number(series["ok"][index] / series["minute_s"], 2),
                number(series["p99_ms"][index], 3),
            ]
            for key in ("rss_mib", "heap_after_gc_mib"):
                cells += [number(_at(series.get(key, {}).get(name), index), 1) for name in services]
            minute_rows.append({"cells": cells, "swatch": run["path"]})
        for row in flatness(series):
            verdict = {True: "flat", False: "not flat", None: "–"}[row["flat"]]
            flat_rows.append(
                {
                    "cells": [
                        run_name(run),
                        SERIES_NAMES[row["series"]],
                        row["service"] or "path",
                        str(row["minutes"]),
                        number(row["first"], 3),
                        number(row["last"], 3),
                        number(row["change_percent"], 1),
                        {"text": verdict, "class": "below-goal" if row["flat"] is False else ""},
                    ],
                    "swatch": run["path"],
                }
            )
    heads = (
        ["run", "minute", "sent", "ok/s", "p99 (ms)"]
        + ["RSS %s (MiB)" % name for name in services]
        + ["heap after GC %s (MiB)" % name for name in services]
    )
    return {
        "how": HOW,
        "minutes": {"heads": heads, "rows": minute_rows},
        "flatness": {
            "heads": [
                "run",
                "series",
                "service",
                "minutes",
                "first third (median)",
                "last third (median)",
                "change (%)",
                "within %d %%" % round(FLAT_LIMIT * 100),
            ],
            "rows": flat_rows,
        },
    }


def _at(values: Optional[List], index: int):
    return values[index] if values and index < len(values) else None


def problems(run: Dict) -> List[str]:
    """Why a soaked run's series are incomplete: a minute without its p99, RSS or heap after GC, or minutes whose
    requests do not add up to the run's. Whether they are flat is a finding, not a check."""
    series = run["per_minute"]
    minutes = int(run["duration_s"] // series["minute_s"])
    found = []
    if len(series["sent"]) != minutes:
        found.append("%d minutes in the per-minute series, DURATION has %d" % (len(series["sent"]), minutes))
    if sum(series["ok"]) > run["ok"] or sum(series["sent"]) > run["sent"]:
        found.append("the minutes count more requests than the run")
    gaps = ["p99"] if None in series["p99_ms"] else []
    for key in ("rss_mib", "heap_after_gc_mib"):
        for name, values in (series.get(key) or {}).items():
            if len(values) != minutes or None in values:
                gaps.append("%s of %s" % (SERIES_NAMES[key], name))
    if not series.get("rss_mib"):
        gaps.append("every service's RSS")
    if gaps:
        found.append(
            "minutes without a figure: %s%s"
            % (", ".join(gaps), " (%s)" % "; ".join(series["errors"]) if series.get("errors") else "")
        )
    return found
