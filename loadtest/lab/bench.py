"""One measured run: warm up and discard, then run ab (or Vegeta) with the CPU counters read right around it."""

import datetime
import os
import subprocess
import time
from dataclasses import dataclass, field
from typing import Dict, List, Optional

from . import ab_output, cpu, open_loop, server_metrics
from .paths import AGGREGATOR, Path
from .settings import LabError, Settings

# ab's -t stops at this many requests if the time has not run out first.
WARMUP_MAX_REQUESTS = 10_000_000


class ServiceExited(LabError):
    """A service the run was measuring is gone; the message says which run."""


@dataclass
class Service:
    """A running service the lab started: its module name, the process ids of its replicas (REPLICAS), the HTTP
    base URL of the first (if any) and the URLs of their /actuator/prometheus pages (if known)."""

    name: str
    pids: List[int]
    base_url: Optional[str]
    metrics_urls: List[str] = field(default_factory=list)


def run_slug(path: str, n: int, point: int, open_loop: bool = False) -> str:
    """The file-name stem of a run's raw outputs, e.g. rest-unary_n1000_c100 (or _r50, 50 requests a second)."""
    return "%s_n%d_%s%d" % (path.replace("/", "-"), n, "r" if open_loop else "c", point)


def warm_up(path: Path, n: int, point: int, settings: Settings, services: List[Service], raw_dir: str,
            log=print, vegeta: Optional[str] = None) -> None:
    """WARMUP_SECONDS of the measured load (concurrency, or rate), discarded: time, not a count of requests, because
    the JIT needs seconds of steady load whatever a path's pace. Then waits until the aggregator is idle."""
    if not settings.warmup_s:
        return
    url = path.url({s.name: s.base_url for s in services if s.base_url}, n)
    slug = run_slug(path.name, n, point, settings.open_loop) + "-warmup"
    if settings.open_loop:
        log("  warm-up: %gs at %d requests a second (discarded)" % (settings.warmup_s, point))
        outcome = open_loop.run(vegeta, url, path.expected_body(n), point, settings.warmup_s, settings.ab_timeout_s,
                                raw_dir, slug)
        if "error" in outcome:
            log("  warning: the warm-up failed: %s" % outcome["error"])
    else:
        log("  warm-up: %gs at %d at a time (discarded)" % (settings.warmup_s, point))
        done = _run_ab(ab_output.ab_command(url, WARMUP_MAX_REQUESTS, point, settings.ab_timeout_s, None,
                                            seconds=settings.warmup_s),
                       os.path.join(raw_dir, slug + ".txt"))
        if done.returncode != 0:
            log("  warning: the warm-up ended with ab exit code %d (see raw/%s.txt)" % (done.returncode, slug))
    _await_idle(path, services, settings.ab_timeout_s, log)


def measure(path: Path, n: int, point: int, settings: Settings, services: List[Service], raw_dir: str,
            repeat: int = 1, log=print, vegeta: Optional[str] = None) -> Dict:
    """Measures one repeat of a combination (warm already) and returns its full record.

    point is the concurrency of a closed loop (ab) or the rate of an open one (Vegeta, settings.open_loop)."""
    url = path.url({s.name: s.base_url for s in services if s.base_url}, n)
    slug = "%s_%d" % (run_slug(path.name, n, point, settings.open_loop), repeat)
    # The services' metrics are read right around the measured run: after the warm-up, so that the deltas hold
    # the measured requests alone, and just outside the CPU and peak-RSS window, so that the reads cost it nothing.
    metrics_urls = {s.name: s.metrics_urls for s in services if s.name in path.services and s.metrics_urls}
    metrics_before, metrics_error = _scrape(metrics_urls, path)
    pids = {s.name: s.pids for s in services}
    rss_scope = "run" if all([cpu.reset_peak_rss(pid) for some in pids.values() for pid in some]) else "since start"
    load_before = cpu.load_average()
    csv_path = os.path.join(raw_dir, slug + ".csv")
    started_at = now()
    if settings.open_loop:
        log("  measuring: %d requests a second for %gs (repeat %d)" % (point, settings.duration_s, repeat))
    else:
        log("  measuring: %d requests, %d at a time (repeat %d)" % (settings.requests, point, repeat))
    before = cpu.take_sample(pids)
    samples = []
    if settings.open_loop:
        # Sampled as the attack ends, before Vegeta reads its results back: that reading is not the load's CPU.
        outcome = open_loop.run(vegeta, url, path.expected_body(n), point, settings.duration_s, settings.ab_timeout_s,
                                raw_dir, slug, after_attack=lambda: samples.append(_sample(pids)))
    else:
        done = _run_ab(ab_output.ab_command(url, settings.requests, point, settings.ab_timeout_s, csv_path),
                       os.path.join(raw_dir, slug + ".txt"))
    try:
        after = samples[0] if samples else cpu.take_sample(pids)
        if isinstance(after, Exception):
            raise after
        rss_mb = {name: cpu.peak_rss_mib(some) for name, some in pids.items()}
    except (OSError, ValueError):
        # A process that exited has no counters left (an exited child's status has no VmHWM).
        raise ServiceExited("a service exited during the measured run of %s n=%d %s=%d: see its log in logs/"
                            % (path.name, n, "rate" if settings.open_loop else "c", point)) from None
    server_side = _server_side(path, metrics_urls, metrics_before, metrics_error)

    # The lab measures only after every path passed the pre-check against the exact expected answer.
    record = {"path": path.name, "n": n, "concurrency": None if settings.open_loop else point,
              "requests": None if settings.open_loop else settings.requests, "url": url, "services": path.services,
              "started_at": started_at, "verified": {"pre_check": "exact body"},
              "raw": {"report": "raw/%s.txt" % slug}, "load_average_before": load_before, "rss_scope": rss_scope,
              "server_side": server_side}
    if settings.open_loop:
        record.update(outcome, verified=dict(record["verified"], **outcome.get("verified", {})))
        if "error" not in outcome:
            record.update(resources(path, n, outcome["ok"], cpu.cpu_between(before, after, generator="vegeta"),
                                    rss_mb))
        return record
    record["raw"]["csv"] = "raw/%s.csv" % slug
    if done.returncode != 0:
        record["error"] = "ab exited with code %d: %s" % (done.returncode, _last_line(done.stderr))
        return record
    try:
        report = ab_output.parse_report(done.stdout)
        curve = _read_curve(csv_path, report.completed)
    except ab_output.AbOutputError as error:
        record["error"] = "cannot read ab's output: %s" % error
        return record
    record.update(figures(path, n, report, curve, cpu.cpu_between(before, after), rss_mb))
    return record


def repeat_summary(record: Dict) -> Dict:
    """What results.json keeps of one repeat beside the run's medians."""
    services = record.get("services") or []
    cpu_usage = record.get("cpu") or {}

    def path_cpu(field: str) -> Optional[float]:
        values = [(cpu_usage.get(name) or {}).get(field) for name in services]
        return round(sum(values), 3) if values and None not in values else None

    summary = {"started_at": record.get("started_at"), "rps": record.get("rps"),
               "latency_ms": record.get("latency_ms"), "cpu_us_per_call": path_cpu("us_per_call"),
               "cpu_ms_per_request": path_cpu("ms_per_request"),
               "steal_percent": (cpu_usage.get("steal") or {}).get("percent"),
               "load_average_1m": (record.get("load_average_before") or [None])[0], "raw": record.get("raw")}
    for key in ("completed", "failed", "non2xx", "sent", "ok", "errors", "error"):
        if key in record:
            summary[key] = record[key]
    return summary


def _await_idle(path: Path, services: List[Service], timeout_s: float, log, sleep=time.sleep) -> None:
    """Waits until the aggregator holds no admitted request: ab's time limit abandons the warm-up's requests under
    way, and their fan-outs must not run on into the measured run."""
    urls = next((s.metrics_urls for s in services if s.name == path.target == AGGREGATOR and s.metrics_urls), None)
    if not urls:
        return
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            if server_metrics.total(server_metrics.scrape(urls[0]), "aggregator_admission_squares") == 0:
                return
        except server_metrics.MetricsError:
            return
        sleep(0.2)
    log("  warning: the aggregator still held requests of the warm-up after %g s" % timeout_s)


def _scrape(urls: Dict[str, List[str]], path: Path):
    """(samples by service, None), or (None, why not)."""
    missing = [name for name in path.services if name not in urls]
    if missing:
        return None, "no metrics URL for %s" % ", ".join(missing)
    try:
        # Settled too: the warm-up's last calls may still be being recorded, and they are not the run's.
        return server_metrics.settle(path, server_metrics.scrape_all(urls),
                                     lambda: server_metrics.scrape_all(urls))[0], None
    except server_metrics.MetricsError as error:
        return None, str(error)


def _server_side(path: Path, urls: Dict[str, List[str]], before, error: Optional[str]) -> Dict:
    """The run's server_side record: the services' metric deltas, or an error saying why there are none."""
    if error:
        return {"error": "no server-side figures: %s" % error}
    try:
        return server_metrics.settle(path, before, lambda: server_metrics.scrape_all(urls))[1]
    except server_metrics.MetricsError as error:
        return {"error": "no server-side figures: %s" % error}


def figures(path: Path, n: int, report: ab_output.AbReport, curve: Optional[List[float]],
            usage: Dict[str, Dict], rss_mb: Dict[str, float]) -> Dict:
    """The measured part of a run's record: counts, throughput, latency, CPU and memory."""
    expected_bytes = len(path.expected_body(n).encode())
    # The pre-check compared one answer with the exact expected body; during the run ab compares every
    # response's length with the first one's (a mismatch is a failed request), and the first one's with the
    # expected body's here, so every counted response had the expected answer's length.
    verified = {"pre_check": "exact body", "expected_bytes": expected_bytes, "response_bytes": report.document_length,
                "length_checked": report.completed, "length_mismatches": report.failed_breakdown["length"],
                "passed": (report.completed - report.failed_breakdown["length"] - report.non2xx
                           if report.document_length == expected_bytes else 0)}
    return dict(resources(path, n, report.completed, usage, rss_mb), **{
        "verified": verified,
        "completed": report.completed,
        "failed": report.failed,
        "failed_breakdown": report.failed_breakdown,
        "non2xx": report.non2xx,
        "rps": report.rps,
        "time_taken_s": report.time_taken_s,
        "latency_ms": latency(report, curve),
        "latency_table_ms": {str(k): v for k, v in report.percentile_table_ms.items()},
        "latency_curve_ms": curve,
    })


def resources(path: Path, n: int, requests: int, usage: Dict[str, Dict], rss_mb: Dict[str, float]) -> Dict:
    """CPU (with its share per request and per downstream call, over the requests answered) and peak RSS."""
    calls = requests * path.calls_per_request(n)
    cpu_usage = {}
    for name, entry in usage.items():
        entry = dict(entry)
        entry["ms_per_request"] = _per(entry["seconds"] * 1e3, requests)
        entry["us_per_call"] = _per(entry["seconds"] * 1e6, calls)
        cpu_usage[name] = entry
    return {"downstream_calls": calls, "cpu": cpu_usage, "rss_mb": rss_mb}


def latency(report: ab_output.AbReport, curve: Optional[List[float]]) -> Dict[str, Optional[float]]:
    """Mean, p50, p90, p99 and max in ms.

    The percentiles come from ab's -e CSV, which has microsecond resolution; ab's printed table rounds to
    whole milliseconds, too coarse for a fast path. Both come from the same sorted list inside ab.
    """
    if curve:
        return {"mean": report.mean_ms, "p50": curve[50], "p90": curve[90], "p99": curve[99], "max": curve[100]}
    table = report.percentile_table_ms
    return {"mean": report.mean_ms, "p50": table.get(50), "p90": table.get(90), "p99": table.get(99),
            "max": table.get(100)}


def _run_ab(command: List[str], report_path: str) -> subprocess.CompletedProcess:
    # subprocess.run kills ab if the lab is interrupted while it waits, so no ab outlives the lab.
    done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    with open(report_path, "w") as handle:
        handle.write(done.stdout)
        if done.stderr.strip():
            handle.write("\n--- ab stderr ---\n" + done.stderr)
    return done


def _read_curve(csv_path: str, completed: int) -> Optional[List[float]]:
    if not completed or not os.path.exists(csv_path):
        return None
    with open(csv_path) as handle:
        return ab_output.parse_percentile_csv(handle.read(), completed)


def _per(amount: float, count: int) -> Optional[float]:
    return round(amount / count, 3) if count else None


def now() -> str:
    return datetime.datetime.now().astimezone().isoformat(timespec="seconds")


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else "(no message)"


def _sample(pids: Dict[str, List[int]]):
    """cpu.take_sample, or the error it raised (a service gone), for the caller to raise in its own place."""
    try:
        return cpu.take_sample(pids)
    except (OSError, ValueError) as error:
        return error
