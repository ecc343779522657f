"""A run's figures for other tools, written beside results.json: figures.csv (one row per path, stack, condition and
repeat) and figures.om (the same as OpenMetrics text, each sample at its repeat's start, which `promtool tsdb
create-blocks-from openmetrics` loads into a Prometheus). The columns and metrics: docs/results-folder.md."""

import csv
import datetime
import io
import os
from typing import Dict, Iterator, List, Optional

from ..core import records

CSV = "figures.csv"
OPENMETRICS = "figures.om"

# Each row's conditions, then its repeat's figures, then the whole run's (the same on every repeat of a run).
CONDITIONS = ("run", "path", "stack", "network", "payload", "n", "load", "concurrency", "rate", "repeat", "started_at")
REPEAT_FIGURES = ("rps", "p50_ms", "p90_ms", "p99_ms", "max_ms", "cpu_us_per_call")
RUN_FIGURES = ("failed", "non2xx", "rss_mb", "rps_spread_percent", "error")
COLUMNS = CONDITIONS + REPEAT_FIGURES + RUN_FIGURES

QUANTILES = {"p50_ms": "0.5", "p90_ms": "0.9", "p99_ms": "0.99", "max_ms": "1"}


def write(results_dir: str, data: Dict) -> List[str]:
    """Writes both files from results.json's data; their paths."""
    rows = list(csv_rows(data, os.path.basename(os.path.normpath(results_dir))))
    written = []
    for name, text in ((CSV, csv_text(rows)), (OPENMETRICS, openmetrics(rows))):
        path = os.path.join(results_dir, name)
        with open(path, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
        written.append(path)
    return written


def csv_rows(data: Dict, run_id: str) -> Iterator[Dict]:
    """One row per measured run and repeat (a run without repeats is its own repeat 1)."""
    for run in data["runs"]:
        open_loop = run.get("load") == "open"
        conditions = {
            "run": run_id,
            "path": run["path"],
            "stack": records.stack(run),
            "network": records.network(run),
            "payload": records.payload(run),
            "n": run["n"],
            "load": "open" if open_loop else "closed",
            "concurrency": None if open_loop else run.get("concurrency"),
            "rate": run.get("rate") if open_loop else None,
        }
        whole = _whole_run(run)
        for index, repeat in enumerate(run.get("repeats") or [run], start=1):
            figures = {} if records.failed(run) else _figures(repeat)
            started = repeat.get("started_at") or run.get("started_at") or data["started_at"]
            yield dict(conditions, repeat=index, started_at=started, **figures, **whole)


def _figures(record: Dict) -> Dict:
    latency = record.get("latency_ms") or {}
    cpu = record.get("cpu_us_per_call")
    if cpu is None and record.get("cpu"):
        cpu = round(records.path_cpu(record, "us_per_call"), 3)
    return {
        "rps": record.get("rps"),
        **{name: latency.get(name[: -len("_ms")]) for name in QUANTILES},
        "cpu_us_per_call": cpu,
    }


def _whole_run(run: Dict) -> Dict:
    if records.failed(run):
        return {"error": run[records.ERROR]}
    return {
        "failed": run.get("failed"),
        "non2xx": run.get("non2xx"),
        "rss_mb": (run.get("rss_mb") or {}).get(run["services"][0]) if run.get("services") else None,
        "rps_spread_percent": (run.get("spread") or {}).get("rps"),
    }


def csv_text(rows: List[Dict]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=COLUMNS, restval="", lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({key: "" if value is None else value for key, value in row.items()})
    return out.getvalue()


# (metric, help, the row's column, factor to the metric's unit, extra label); one family per metric, in this order.
METRICS = (
    ("lab_requests_per_second", "requests answered a second (ab's or Vegeta's goodput)", "rps", 1, None),
    *(
        ("lab_latency_seconds", "request latency at a quantile (1: the slowest)", column, 1e-3, ("quantile", q))
        for column, q in QUANTILES.items()
    ),
    ("lab_cpu_per_call_seconds", "CPU of the services that served the path, per call", "cpu_us_per_call", 1e-6, None),
    ("lab_failed_requests", "requests the load generator counted as failed, whole run", "failed", 1, None),
    ("lab_non2xx_responses", "answers with a status other than 2xx, whole run", "non2xx", 1, None),
    ("lab_peak_rss_bytes", "peak resident memory of the path's first service, whole run", "rss_mb", 2**20, None),
)
_RUN_WIDE = {"failed", "non2xx", "rss_mb"}


def openmetrics(rows: List[Dict]) -> str:
    """The rows as OpenMetrics gauges, each sample at its repeat's start; a whole run's figures once, at its first."""
    lines: List[str] = []
    for name in dict.fromkeys(metric[0] for metric in METRICS):
        lines += ["# TYPE %s gauge" % name, "# HELP %s %s" % (name, _help(name))]
        for metric, _, column, factor, extra in METRICS:
            if metric != name:
                continue
            for row in rows:
                if column in _RUN_WIDE and row["repeat"] != 1:
                    continue
                value = row.get(column)
                if value is None or value == "":
                    continue
                labels = _labels(row, column in _RUN_WIDE) + ([extra] if extra else [])
                lines.append("%s{%s} %r %s" % (name, _label_text(labels), float(value) * factor, _epoch(row)))
    return "\n".join(lines + ["# EOF"]) + "\n"


def _help(name: str) -> str:
    return next(meaning for metric, meaning, *_ in METRICS if metric == name)


def _labels(row: Dict, whole_run: bool) -> List[tuple]:
    names = [key for key in CONDITIONS if key not in ("started_at",) and not (whole_run and key == "repeat")]
    return [(key, row[key]) for key in names if row.get(key) not in (None, "")]


def _label_text(labels: List[tuple]) -> str:
    return ",".join('%s="%s"' % (key, _escaped(str(value))) for key, value in labels)


def _escaped(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _epoch(row: Dict) -> str:
    started: Optional[str] = row.get("started_at")
    moment = datetime.datetime.fromisoformat(started) if started else datetime.datetime.now(datetime.timezone.utc)
    return "%.3f" % moment.timestamp()
