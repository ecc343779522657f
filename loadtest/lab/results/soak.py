"""A soak's figures (lab.measure.soak samples them): whether each per-minute series of a run stayed flat, and its
tables. Flat: the median of the last third of the minutes (at least one) is within FLAT_LIMIT of the median of the
first third."""

import statistics
from typing import Any, Callable, Dict, List, Optional

from ..core.settings import SOAK_MIN_S

# A series that moved more than this between its first and last thirds did not stay flat.
FLAT_LIMIT = 0.10
SERIES_NAMES = {"p99_ms": "p99 (ms)", "rss_mib": "RSS (MiB)", "heap_after_gc_mib": "heap after GC (MiB)"}
HOW = (
    "Soak (an open-loop run of at least %d s): per whole minute of the schedule, the requests due in it, their "
    "correct answers per second and p99; each service's RSS at the minute mark, and its heap after a full "
    "collection the lab asked for then (jcmd GC.run; Micrometer's jvm_gc_live_data_size_bytes). A series is flat "
    "when the median of its last third of minutes is within %d %% of the median of its first third."
    % (SOAK_MIN_S, round(FLAT_LIMIT * 100))
)


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
