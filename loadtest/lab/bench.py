"""One measured run: warm up and discard, then run ab (or Vegeta) with the CPU counters read right around it."""

import datetime
import os
import subprocess
import time
from dataclasses import dataclass, field
from typing import Dict, List, Optional

from . import ab_output, cpu, open_loop, placement, server_metrics, soak, traffic
from .catalogue import AGGREGATOR, LOOPBACK, SMALL, Path
from .errors import ServiceExited
from .processes import Watched, check_alive, wait_until
from .settings import Settings


@dataclass
class Service:
    """A running service the lab started: its module name, the process ids of its replicas (REPLICAS), the HTTP
    base URL of the first (if any), the URLs of their /actuator/prometheus pages (if known), and the ports on which
    its replicas serve their calls (the square services': where their bytes per call are counted)."""

    name: str
    pids: List[int]
    base_url: Optional[str]
    metrics_urls: List[str] = field(default_factory=list)
    serving_ports: List[int] = field(default_factory=list)
    # Its processes, which the lab checks are still alive after each run (empty for one it did not start).
    watched: List[Watched] = field(default_factory=list)


@dataclass(frozen=True)
class Conditions:
    """What a run's calls carry and cross besides the path and the load: the payload shape (PAYLOAD) and the network
    (NETWORK) between the aggregator and the square services."""

    payload: str = SMALL
    network: str = LOOPBACK
    # The stack in file names (lab.stacks' slug), empty for the first stack of a run.
    stack: str = ""
    # The stack as messages name it (lab.stacks' label), e.g. "netty · reactor-netty client · JDK 17".
    stack_label: str = ""

    def slug(self) -> str:
        """The conditions in a file name: nothing for the default ones, so that the article's names stay."""
        return "".join(
            "_" + value
            for value, default in ((self.payload, SMALL), (self.network, LOOPBACK), (self.stack, ""))
            if value != default
        )


DEFAULT_CONDITIONS = Conditions()


def run_text(
    path: str, n: int, point: int, open_loop: bool = False, conditions: Conditions = DEFAULT_CONDITIONS
) -> str:
    """A run as an error names it: grpc/unary n=5 c=2, payload small, network loopback (, stack tomcat · JDK 17)."""
    return "%s n=%d %s=%d, payload %s, network %s%s" % (
        path,
        n,
        "rate" if open_loop else "c",
        point,
        conditions.payload,
        conditions.network,
        ", stack " + conditions.stack_label if conditions.stack_label else "",
    )


def any_exited(services: List[Service]) -> bool:
    """Whether a service the lab started has exited (the open loop stops its attack then, not at DURATION)."""
    return any(process.child.poll() is not None for service in services for process in service.watched)


def ensure_alive(services: List[Service], during: str) -> None:
    """Stops the lab with an error naming the service, the run and its log when a service it started has exited."""
    check_alive([process for service in services for process in service.watched], during)


def run_slug(
    path: str, n: int, point: int, open_loop: bool = False, conditions: Conditions = DEFAULT_CONDITIONS
) -> str:
    """The file-name stem of a run's raw outputs, e.g. rest-unary_n1000_c100 (or _r50, 50 requests a second), with
    its payload shape and network when they are not small and loopback: rest-unary_collection_lan_n100_c1."""
    return "%s%s_n%d_%s%d" % (path.replace("/", "-"), conditions.slug(), n, "r" if open_loop else "c", point)


def requests_for(pace: float, concurrency: int, seconds: float) -> int:
    """The requests that keep concurrency clients busy for about seconds at pace requests a second, in whole rounds of
    concurrency: ab's clients start together, and on a path whose requests take seconds (100 x 1000 squares of
    rest/unary: 2.5 s each) they finish together too, in waves, so a run cut at a time (ab -t) ends in the middle of
    one, counting a part of it and waiting for the rest: three 20 s runs gave 36, 43 and 45 req/s where whole rounds
    gave 45 to 50."""
    return concurrency * max(1, round(pace * seconds / concurrency))


def warm_up(
    path: Path,
    n: int,
    point: int,
    settings: Settings,
    services: List[Service],
    raw_dir: str,
    log=print,
    vegeta: Optional[str] = None,
    conditions: Conditions = DEFAULT_CONDITIONS,
) -> "WarmUp":
    """WARMUP_SECONDS of the measured load (concurrency, or rate), discarded: time, not a count of requests, because
    the JIT needs seconds of steady load whatever a path's pace; a closed loop goes on while the JIT still compiles
    (WarmUp). Then waits until the aggregator is idle. Returns the closed loop's pace at its end (requests a second;
    lab.bench.requests_for) and how long it took."""
    if not settings.warmup_s:
        return WarmUp(None, 0.0)
    url = path.url({s.name: s.base_url for s in services if s.base_url}, n, conditions.payload)
    slug = run_slug(path.name, n, point, settings.open_loop, conditions) + "-warmup"
    if settings.open_loop:
        log("  warm-up: %gs at %d requests a second (discarded)" % (settings.warmup_s, point))
        outcome = open_loop.run(
            vegeta, url, path.expected_body(n), point, settings.warmup_s, settings.ab_timeout_s, raw_dir, slug
        )
        if "error" in outcome:
            log("  warning: the warm-up failed: %s" % outcome["error"])
        warm = WarmUp(None, settings.warmup_s)
    else:
        log("  warm-up: %gs at %d at a time (discarded), longer while the JIT compiles" % (settings.warmup_s, point))
        compiling = _JitWatch({s.name: s.metrics_urls for s in services if s.name in path.services and s.metrics_urls})
        warm = _warm_in_rounds(url, point, settings, os.path.join(raw_dir, slug + ".txt"), compiling, log)
        log("  warm after %.0fs%s" % (warm.seconds, "" if warm.jit_settled else ", the JIT still compiling"))
    ensure_alive(services, "the warm-up of " + run_text(path.name, n, point, settings.open_loop, conditions))
    _await_idle(path, services, settings.ab_timeout_s, log)
    return warm


# A closed loop's warm-up goes on past WARMUP_SECONDS, up to JIT_WAIT times it, while any service of the path spent
# more than JIT_BUSY of the last stretch compiling: code still being compiled at round 1 made the REST paths
# faster at round 3 than at round 1 (docs/performance.md, "Warm until the JIT settles").
JIT_BUSY = 0.05
JIT_WAIT = 4


@dataclass(frozen=True)
class WarmUp:
    """A warm-up's outcome: the closed loop's pace at its end (None: unknown), its seconds, and whether every
    service's JIT had settled (None: not watched)."""

    pace: Optional[float]
    seconds: float
    jit_settled: Optional[bool] = None

    def record(self) -> Dict:
        return {"seconds": round(self.seconds, 1), "jit_settled": self.jit_settled}


class _JitWatch:
    """The share of the time since its last look that each service's JIT compiled (jvm_compilation_time_ms_total,
    Micrometer's, on /actuator/prometheus)."""

    def __init__(self, urls: Dict[str, List[str]]) -> None:
        self.urls = urls
        self.last = self._read()

    def busiest_share(self) -> Optional[float]:
        """The largest service's share since the last look, or None when a page could not be read."""
        before, self.last = self.last, self._read()
        if before is None or self.last is None:
            return None
        (started, compiled_before), (ended, compiled_after) = before, self.last
        elapsed_ms = (ended - started) * 1000.0
        return max((compiled_after[name] - compiled_before[name]) / elapsed_ms for name in compiled_after)

    def _read(self):
        if not self.urls:
            return None
        try:
            pages = server_metrics.scrape_all(self.urls)
        except server_metrics.MetricsError:
            return None
        return time.monotonic(), {
            name: server_metrics.total(samples, "jvm_compilation_time_ms_total") for name, samples in pages.items()
        }


def _warm_in_rounds(url: str, point: int, settings: Settings, report_path: str, compiling: _JitWatch, log) -> WarmUp:
    """ab runs of whole rounds of point requests, one after another, until WARMUP_SECONDS have passed and the JIT has
    settled (or JIT_WAIT times WARMUP_SECONDS): each lasts about a quarter of WARMUP_SECONDS at the pace of the one
    before (the first is one round), so that the last one's pace, measured like a measured run's, counts the requests
    of the first. Returns that pace (None when ab failed)."""
    started = time.monotonic()
    ends, latest = started + settings.warmup_s, started + settings.warmup_s * JIT_WAIT
    requests, pace = point, None
    while True:
        done = _run_ab(ab_output.ab_command(url, requests, point, settings.ab_timeout_s, None), report_path)
        if done.returncode != 0:
            log("  warning: the warm-up ended with ab exit code %d (see %s)" % (done.returncode, report_path))
            return WarmUp(None, time.monotonic() - started)
        try:
            pace = ab_output.parse_report(done.stdout).rps or pace
        except ab_output.AbOutputError:
            pass
        busy = compiling.busiest_share()
        now = time.monotonic()
        settled = None if busy is None else busy <= JIT_BUSY
        if not pace or (now >= ends and settled is not False) or now >= latest:
            return WarmUp(pace, now - started, settled)
        requests = requests_for(
            pace, point, min(ends - now, settings.warmup_s / 4) if now < ends else settings.warmup_s / 4
        )


def measure(
    path: Path,
    n: int,
    point: int,
    settings: Settings,
    services: List[Service],
    raw_dir: str,
    repeat: int = 1,
    log=print,
    vegeta: Optional[str] = None,
    conditions: Conditions = DEFAULT_CONDITIONS,
    pace: Optional[float] = None,
) -> Dict:
    """Measures one repeat of a combination (warm already) and returns its full record.

    point is the concurrency of a closed loop (ab) or the rate of an open one (Vegeta, settings.open_loop); pace, the
    closed loop's requests a second lately (the warm-up's, or the last repeat's), from which ab's requests fill
    DURATION unless REQUESTS fixes them."""
    url = path.url({s.name: s.base_url for s in services if s.base_url}, n, conditions.payload)
    requests = settings.requests or requests_for(pace or 0.0, point, settings.duration_s * FIRST_PART)
    slug = "%s_%d" % (run_slug(path.name, n, point, settings.open_loop, conditions), repeat)
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
        log(
            "  measuring: %d requests, %d at a time (repeat %d)%s"
            % (
                requests,
                point,
                repeat,
                ""
                if settings.requests
                else ", then more to fill %gs (%.1f a second lately)" % (settings.duration_s, pace or 0.0),
            )
        )
    # The square service's connections are read right beside the CPU samples, just outside them: ss is a child of
    # this process, and its CPU would otherwise count as the load generator's.
    wire = _Wire(path, services)
    wire.read_before()
    before = cpu.take_sample(pids)
    samples = []
    if settings.open_loop:
        sampler = _soak_sampler(path, services, settings)

        def after_attack() -> None:
            # Sampled as the attack ends, before Vegeta reads its results back: that reading is not the load's CPU.
            # A soak's last minute is read first, and its jcmd runs are not the load generator's CPU.
            if sampler:
                sampler.finish()
            samples.append(_sample(pids, wire, sampler.jcmd_cpu_s if sampler else 0.0))

        if sampler:
            sampler.start()
        try:
            outcome = open_loop.run(
                vegeta,
                url,
                path.expected_body(n),
                point,
                settings.duration_s,
                settings.ab_timeout_s,
                raw_dir,
                slug,
                after_attack=after_attack,
                minute_s=soak.MINUTE_S if sampler else None,
                stop_when=lambda: any_exited(services),
            )
        finally:
            if sampler:
                sampler.stop()
        if sampler and "per_minute" in outcome:
            outcome["per_minute"] = sampler.series(outcome["per_minute"])
    else:
        closed = _closed_loop(url, point, requests, settings, os.path.join(raw_dir, slug + ".txt"), csv_path)
    during = "the measured run of " + run_text(path.name, n, point, settings.open_loop, conditions)
    # Before anything is read of the run: a service that died makes every figure after it a refusal, not a finding.
    ensure_alive(services, during)
    try:
        after = samples[0] if samples else _sample(pids, wire)
        if isinstance(after, Exception):
            raise after
        rss_mb = {name: cpu.peak_rss_mib(some) for name, some in pids.items()}
    except (OSError, ValueError):
        # A process that exited has no counters left (an exited child's status has no VmHWM).
        ensure_alive(services, during)
        raise ServiceExited("a service exited during %s: see its log in logs/" % during) from None
    server_side = _server_side(path, metrics_urls, metrics_before, metrics_error)

    # The lab measures only after every path passed the pre-check against the exact expected answer.
    record = {
        "path": path.name,
        "payload": conditions.payload,
        "network": conditions.network,
        "n": n,
        "concurrency": None if settings.open_loop else point,
        "requests": None if settings.open_loop else requests,
        "url": url,
        "services": path.services,
        "started_at": started_at,
        "verified": {"pre_check": "exact body"},
        "raw": {"report": "raw/%s.txt" % slug},
        "load_average_before": load_before,
        "rss_scope": rss_scope,
        "server_side": server_side,
    }
    if settings.open_loop:
        record.update(outcome, verified=dict(record["verified"], **outcome.get("verified", {})))
        if "error" not in outcome:
            record.update(resources(path, n, outcome["ok"], cpu.cpu_between(before, after, generator="vegeta"), rss_mb))
            record["bytes_per_call"] = wire.per_call(before, after, _square_calls(record))
        return record
    record["raw"]["csv"] = "raw/%s.csv" % slug
    record["requests"] = closed.requests
    if closed.error:
        record["error"] = closed.error
        return record
    record.update(figures(path, n, closed.report, closed.curve, cpu.cpu_between(before, after), rss_mb))
    if closed.runs > 1:
        record["ab_runs"] = closed.runs
    record["bytes_per_call"] = wire.per_call(before, after, _square_calls(record))
    return record


# A timed run's first ab run asks for this share of DURATION at the pace lately, and the next ones for half of what is
# left at the pace just measured: a path that slowed down then still ends near DURATION, not past it.
FIRST_PART = 0.9


@dataclass
class _ClosedLoop:
    """What the ab runs of one measured repeat gave: their report and curve as one run's, or an error."""

    requests: int
    runs: int = 0
    report: Optional[ab_output.AbReport] = None
    curve: Optional[List[float]] = None
    error: Optional[str] = None


def _closed_loop(
    url: str, point: int, requests: int, settings: Settings, report_path: str, csv_path: str
) -> _ClosedLoop:
    """REQUESTS requests in one ab run; or, by time, ab runs of whole rounds one after another until DURATION is
    filled to within half a round, read as one run: ab cannot stop at a time without cutting a round in two (ab -t
    counts only the requests done by then and wastes the rest, on rest/unary up to 12 % of 20 s)."""
    outcome = _ClosedLoop(requests=0)
    reports, curves, texts = [], [], []
    while True:
        done = _run_ab(ab_output.ab_command(url, requests, point, settings.ab_timeout_s, csv_path), report_path)
        texts.append(
            "--- ab run %d: %d requests, %d at a time ---\n%s"
            % (len(texts) + 1, requests, point, _report_text(report_path))
        )
        outcome.requests += requests
        outcome.runs += 1
        if done.returncode != 0:
            outcome.error = "ab exited with code %d: %s" % (done.returncode, _last_line(done.stderr))
            break
        try:
            report = ab_output.parse_report(done.stdout)
            curve = _read_curve(csv_path, report.completed)
        except ab_output.AbOutputError as error:
            outcome.error = "cannot read ab's output: %s" % error
            break
        reports.append(report)
        curves.append(curve)
        left = settings.duration_s - sum(r.time_taken_s for r in reports)
        round_s = point / report.rps if report.rps > 0 else float("inf")
        if settings.requests or left < round_s / 2:
            break
        # Half of what is left, at least a round: a pace that drops meanwhile overruns DURATION by little.
        requests = point * max(1, int(left / 2 / round_s))
    if len(texts) > 1:
        with open(report_path, "w") as handle:
            handle.write("\n".join(texts))
    if outcome.error or not reports:
        return outcome
    usable = [c for c in curves if c] if all(curves) else []
    outcome.curve = ab_output.merge_curves(usable, [r.completed for r in reports]) if usable else None
    outcome.report = ab_output.merge(reports, outcome.curve)
    if outcome.curve and len(curves) > 1:
        with open(csv_path, "w") as handle:
            handle.write(ab_output.write_percentile_csv(outcome.curve))
    return outcome


def _report_text(report_path: str) -> str:
    with open(report_path) as handle:
        return handle.read()


class _Wire:
    """The bytes a run's square service moved: its connections on the ports it serves (read with ss), or, for
    rest/square, whose every connection closes in the run, its read and write counters (lab.traffic)."""

    def __init__(self, path: Path, services: List[Service]) -> None:
        self.service = path.downstream or path.target
        self.ports = next((s.serving_ports for s in services if s.name == self.service), [])
        self.by_sockets = path.target == AGGREGATOR
        self.before: Dict = {}
        self.after: Dict = {}
        self.error: Optional[str] = None

    def read_before(self) -> None:
        self.before = self._read()

    def read_after(self) -> None:
        self.after = self._read()

    def _read(self) -> Dict:
        if not self.by_sockets or self.error:
            return {}
        try:
            return traffic.read_connections(self.ports)
        except traffic.TrafficError as error:
            self.error = str(error)
            return {}

    def per_call(self, before: cpu.Sample, after: cpu.Sample, calls: int) -> Dict:
        if not self.by_sockets:
            return traffic.from_syscalls(
                self.service, before.process_io[self.service], after.process_io[self.service], calls
            )
        if self.error:
            return {"error": "no bytes per call: %s" % self.error}
        return traffic.by_sockets(self.service, self.ports, self.before, self.after, calls)


def _square_calls(record: Dict) -> int:
    """The calls the square service served in the run: its own count when its metrics were read, else the requests
    answered times their calls each."""
    served = (record.get("server_side") or {}).get("square_calls")
    return served if isinstance(served, int) else record.get("downstream_calls") or 0


def repeat_summary(record: Dict) -> Dict:
    """What results.json keeps of one repeat beside the run's medians."""
    services = record.get("services") or []
    cpu_usage = record.get("cpu") or {}

    def path_cpu(field: str) -> Optional[float]:
        values = [(cpu_usage.get(name) or {}).get(field) for name in services]
        return round(sum(values), 3) if values and None not in values else None

    summary = {
        "started_at": record.get("started_at"),
        "rps": record.get("rps"),
        "latency_ms": record.get("latency_ms"),
        "cpu_us_per_call": path_cpu("us_per_call"),
        "cpu_ms_per_request": path_cpu("ms_per_request"),
        "steal_percent": (cpu_usage.get("steal") or {}).get("percent"),
        "load_average_1m": (record.get("load_average_before") or [None])[0],
        "raw": record.get("raw"),
    }
    wire = record.get("bytes_per_call") or {}
    if "request" in wire:
        summary["bytes_per_call"] = {"request": wire["request"], "response": wire["response"]}
    for key in ("requests", "time_taken_s", "completed", "failed", "non2xx", "sent", "ok", "errors", "error"):
        if key in record:
            summary[key] = record[key]
    return summary


def _await_idle(path: Path, services: List[Service], timeout_s: float, log, sleep=time.sleep) -> None:
    """Waits until the aggregator holds no admitted request: ab's time limit abandons the warm-up's requests under
    way, and their fan-outs must not run on into the measured run."""
    urls = next((s.metrics_urls for s in services if s.name == path.target == AGGREGATOR and s.metrics_urls), None)
    if not urls:
        return

    def idle() -> bool:
        try:
            return server_metrics.total(server_metrics.scrape(urls[0]), "aggregator_admission_squares") == 0
        except server_metrics.MetricsError:
            return True

    if not wait_until(idle, timeout_s, 0.2, sleep):
        log("  warning: the aggregator still held requests of the warm-up after %g s" % timeout_s)


def _scrape(urls: Dict[str, List[str]], path: Path):
    """(samples by service, None), or (None, why not)."""
    missing = [name for name in path.services if name not in urls]
    if missing:
        return None, "no metrics URL for %s" % ", ".join(missing)
    try:
        # Settled too: the warm-up's last calls may still be being recorded, and they are not the run's.
        return server_metrics.settle(path, server_metrics.scrape_all(urls), lambda: server_metrics.scrape_all(urls))[
            0
        ], None
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


def figures(
    path: Path,
    n: int,
    report: ab_output.AbReport,
    curve: Optional[List[float]],
    usage: Dict[str, Dict],
    rss_mb: Dict[str, float],
) -> Dict:
    """The measured part of a run's record: counts, throughput, latency, CPU and memory."""
    expected_bytes = len(path.expected_body(n).encode())
    # The pre-check compared one answer with the exact expected body; during the run ab compares every
    # response's length with the first one's (a mismatch is a failed request), and the first one's with the
    # expected body's here, so every counted response had the expected answer's length.
    verified = {
        "pre_check": "exact body",
        "expected_bytes": expected_bytes,
        "response_bytes": report.document_length,
        "length_checked": report.completed,
        "length_mismatches": report.failed_breakdown["length"],
        "passed": (
            report.completed - report.failed_breakdown["length"] - report.non2xx
            if report.document_length == expected_bytes
            else 0
        ),
    }
    return dict(
        resources(path, n, report.completed, usage, rss_mb),
        **{
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
        },
    )


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
    return {
        "mean": report.mean_ms,
        "p50": table.get(50),
        "p90": table.get(90),
        "p99": table.get(99),
        "max": table.get(100),
    }


def _run_ab(command: List[str], report_path: str) -> subprocess.CompletedProcess:
    # subprocess.run kills ab if the lab is interrupted while it waits, so no ab outlives the lab.
    done = subprocess.run(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=placement.pin("load_generator")
    )
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


def _sample(pids: Dict[str, List[int]], wire: _Wire, not_generator_cpu_s: float = 0.0):
    """cpu.take_sample, then the square service's connections, or the error it raised (a service gone), for the
    caller to raise in its own place. not_generator_cpu_s: CPU of the lab's other children (a soak's jcmd runs)."""
    try:
        sample = cpu.take_sample(pids)
    except (OSError, ValueError) as error:
        return error
    wire.read_after()
    sample.children_cpu_s -= not_generator_cpu_s
    return sample


def _soak_sampler(path: Path, services: List[Service], settings: Settings) -> Optional[soak.MinuteSampler]:
    """A soak's per-minute sampler of the path's services (lab.soak), or None for a run that is no soak."""
    if not soak.wanted(settings):
        return None
    return soak.MinuteSampler(
        {s.name: {"pids": s.pids, "metrics_urls": s.metrics_urls} for s in services if s.name in path.services},
        settings.duration_s,
    )
