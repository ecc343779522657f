"""One measured run: warm up and discard, then run the load generator (lab.load_generator: ab or Vegeta) with the
CPU counters, the services' metrics and their peak RSS read right around it."""

import datetime
import time
from dataclasses import dataclass
from typing import Any, Dict, List, Optional

from ..core import metrics, records, repeats, warmup
from ..core.catalogue import AGGREGATOR, LOOPBACK, SMALL, Path
from ..core.errors import LabError, ServiceExited
from ..core.settings import Settings
from ..host import cpu, traffic
from ..host.processes import check_alive, wait_until
from ..load import ab_output, load_generator
from ..stage import target
from ..stage.services import Service
from . import server_metrics, soak


@dataclass(frozen=True)
class Conditions:
    """What a run's calls carry and cross besides the path and the load: the payload shape (PAYLOAD) and the network
    (NETWORK) between the aggregator and the square services."""

    payload: str = SMALL
    network: str = LOOPBACK
    # The stack in file names (lab.stage.stacks' slug), empty for the first stack of a run.
    stack: str = ""
    # The stack as messages name it (lab.stage.stacks' label), e.g. "netty · reactor-netty client · JDK 17".
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
) -> warmup.WarmUp:
    """WARMUP_SECONDS of the measured load (concurrency, or rate), discarded: time, not a count of requests, because
    the JIT needs seconds of steady load whatever a path's pace; a closed loop goes on while the JIT still compiles
    (WarmUp). Then waits until the aggregator is idle. Returns the closed loop's pace at its end (requests a second;
    lab.load.load_generator.requests_for) and how long it took."""
    if not settings.warmup_s:
        return warmup.WarmUp(None, 0.0)
    url = path.url({s.name: s.base_url for s in services if s.base_url}, n, conditions.payload)
    slug = run_slug(path.name, n, point, settings.open_loop, conditions) + "-warmup"
    urls = {s.name: s.metrics_urls for s in services if s.name in path.services and s.metrics_urls}
    generator = load_generator.for_settings(settings, vegeta)
    warm = generator.warm(
        url, path.expected_body(n), point, raw_dir, slug, log, lambda: server_metrics.JitWatch(urls).busiest_share
    )
    ensure_alive(services, "the warm-up of " + run_text(path.name, n, point, settings.open_loop, conditions))
    _await_idle(path, services, settings.ab_timeout_s, log)
    return warm


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
    part: int = 0,
) -> Dict:
    """Measures one repeat of a combination (warm already), or part `part` of one (for settings.duration_s), and
    returns its full record.

    point is the concurrency of a closed loop (ab) or the rate of an open one (Vegeta, settings.open_loop); pace, the
    closed loop's requests a second lately (the warm-up's, or the last repeat's), from which ab's requests fill
    DURATION unless REQUESTS fixes them."""
    url = path.url({s.name: s.base_url for s in services if s.base_url}, n, conditions.payload)
    slug = "%s_%d%s" % (
        run_slug(path.name, n, point, settings.open_loop, conditions),
        repeat,
        ".%d" % part if part else "",
    )
    # The services' metrics are read right around the measured run: after the warm-up, so that the deltas hold
    # the measured requests alone, and just outside the CPU and peak-RSS window, so that the reads cost it nothing.
    metrics_urls = {s.name: s.metrics_urls for s in services if s.name in path.services and s.metrics_urls}
    metrics_before, metrics_error = _scrape(metrics_urls, path)
    pids = {s.name: s.pids for s in services if s.pids}
    rss_scope = "run" if all([cpu.reset_peak_rss(pid) for some in pids.values() for pid in some]) else "since start"
    own = _OwnCounters(path, services)
    load_before = cpu.load_average()
    started_at = now()
    sampler = _soak_sampler(path, services, settings)
    generator = load_generator.for_settings(settings, vegeta, soak.MINUTE_S if sampler else None)
    # The square service's connections are read right beside the CPU samples, just outside them: ss is a child of
    # this process, and its CPU would otherwise count as the load generator's.
    wire = _Wire(path, services)
    wire.read_before()
    own.read_before()
    before = cpu.take_sample(pids)
    samples = []

    def after_load() -> None:
        # Sampled as the load ends, before the generator reads its results back: that reading is not the load's CPU.
        # A soak's last minute is read first, and its jcmd runs are not the load generator's CPU.
        if sampler:
            sampler.finish()
        samples.append(_sample(pids, wire, sampler.jcmd_cpu_s if sampler else 0.0))
        own.read_after()

    if sampler:
        sampler.start()
    try:
        load = generator.measure(
            url,
            path.expected_body(n),
            point,
            raw_dir,
            slug,
            repeat,
            pace,
            log,
            after_load,
            stop_when=lambda: any_exited(services),
        )
    finally:
        if sampler:
            sampler.stop()
    if sampler and "per_minute" in load.figures:
        load.figures["per_minute"] = sampler.series(load.figures["per_minute"])
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
    record: Dict[str, Any] = {
        "path": path.name,
        "payload": conditions.payload,
        "network": conditions.network,
        "n": n,
        "concurrency": None if settings.open_loop else point,
        "requests": None,
        "url": url,
        "services": path.services,
        "started_at": started_at,
        "verified": {"pre_check": "exact body"},
        "raw": dict({"report": "raw/%s.txt" % slug}, **load.raw),
        "load_average_before": load_before,
        "rss_scope": rss_scope,
        "server_side": server_side,
    }
    record.update(load.figures, verified=dict(record["verified"], **load.figures.get("verified", {})))
    if load.error:
        return record
    usage = cpu.cpu_between(before, after, generator=generator.name)
    record["rss_scope"] = own.add_to(usage, rss_mb, rss_scope)
    record.update(resources(path, n, load.answered, usage, rss_mb))
    record["bytes_per_call"] = wire.per_call(before, after, _square_calls(record))
    return record


class _Wire:
    """The bytes a run's square service moved: its connections on the ports it serves (read with ss), or, for
    rest/square, whose every connection closes in the run, its read and write counters (lab.traffic)."""

    def __init__(self, path: Path, services: List[Service]) -> None:
        self.service = path.downstream or path.target
        self.ports = next((s.serving_ports for s in services if s.name == self.service), [])
        self.namespace = next((s.namespace for s in services if s.name == self.service), None)
        self.elsewhere = any(s.name == self.service and not s.pids for s in services)
        self.by_sockets = path.target == AGGREGATOR and not self.elsewhere
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
            return traffic.read_connections(self.ports, self.namespace)
        except traffic.TrafficError as error:
            self.error = str(error)
            return {}

    def per_call(self, before: cpu.Sample, after: cpu.Sample, calls: int) -> Dict:
        if self.elsewhere:
            return {"not_measured": "%s runs where the lab does not count its connections (TARGET)" % self.service}
        if not self.by_sockets:
            return traffic.from_syscalls(
                self.service, before.process_io[self.service], after.process_io[self.service], calls
            )
        if self.error:
            return {"error": "no bytes per call: %s" % self.error}
        return traffic.by_sockets(self.service, self.ports, self.before, self.after, calls)


class _OwnCounters:
    """The path's services' CPU time and resident memory as each counts them itself (lab.target), read right beside
    /proc's samples: the figures of a service the lab did not start, and beside /proc's for the lab's own, where the
    two must agree (lab.check_results). From a Prometheus (TARGET_PROMETHEUS) once the window is over instead, with a
    scrape interval of idle services on each side of it."""

    def __init__(self, path: Path, services: List[Service]) -> None:
        own = [s for s in services if s.name in path.services]
        self.urls = {s.name: s.metrics_urls for s in own if s.metrics_urls}
        self.remote = [s.name for s in own if s.read != target.PROC]
        self.prometheus = next((s.prometheus for s in own if s.prometheus), None)
        self.before: Dict[str, target.Counters] = {}
        self.after: Dict[str, target.Counters] = {}
        self.error: Optional[str] = None
        self.window = (0.0, 0.0)

    def read_before(self) -> None:
        if self.prometheus:
            # Its last scrape before the window then finds the services idle.
            self.prometheus.settle()
        self.before = self._read()
        self.window = (time.time(), 0.0)

    def read_after(self) -> None:
        self.window = (self.window[0], time.time())
        if self.prometheus:
            # Its first scrape after the window then finds the services idle again: before the lab reads their
            # metrics pages (lab.server_metrics), whose CPU would otherwise be counted in.
            self.prometheus.settle()
        self.after = self._read()

    def _read(self) -> Dict[str, target.Counters]:
        if self.error or self.prometheus:
            return {}
        try:
            return target.read_counters(self.urls)
        except metrics.MetricsError as error:
            self.error = str(error)
            return {}

    def add_to(self, usage: Dict[str, Dict], rss_mb: Dict[str, float], rss_scope: str) -> str:
        """Puts the counters' figures into a run's usage and peak RSS: a remote service's as its figures, a local one's
        CPU beside /proc's as `own_seconds`; returns the run's RSS scope."""
        start, end = self.window
        scope = rss_scope
        if self.prometheus:
            for name, found in self.prometheus.window(self.remote, start, end).items():
                rss_mb[name] = found.pop("peak_mib")
                scope = scope if found.pop("own_peak") else "since start"
                usage[name] = found
            return scope
        if self.error:
            if self.remote:
                raise LabError("cannot read the CPU time of %s: %s" % (" and ".join(self.remote), self.error))
            for name in self.urls:
                if name in usage:
                    usage[name]["own_error"] = self.error
            return rss_scope
        for name, before in self.before.items():
            after = self.after[name]
            if name in self.remote:
                usage[name] = target.usage_between(name, before, after, end - start)
                rss_mb[name], own_peak = target.peak_mib(before, after)
                scope = scope if own_peak else "since start"
            elif name in usage:
                usage[name]["own_seconds"] = round(after.cpu_s - before.cpu_s, 3)
        return scope


def part_seconds(duration_s: float, parts: int, done: List[float]) -> float:
    """The seconds the next part of a repeat is to fill, after parts that took `done`: what is left of DURATION's
    share so far, so that a part that ran long is made up by the next ones; 0 or less when the parts so far already
    fill it (a path whose one round of requests outlasts a part: its first part measures the whole repeat)."""
    return duration_s * (len(done) + 1) / parts - sum(done)


def part_plan(duration_s: float, parts: int, round_s: float) -> List[float]:
    """The seconds each part of a repeat is expected to take when one round of requests takes round_s: what
    part_seconds asks of it, in whole rounds (at least one), and 0 for a part the earlier ones already filled."""
    done: List[float] = []
    for _ in range(parts):
        wanted = part_seconds(duration_s, parts, done)
        done.append(0.0 if wanted <= 0 else max(round_s, round(wanted / round_s) * round_s) if round_s > 0 else wanted)
    return done


def add_up(path: Path, n: int, parts: List[Dict]) -> Dict:
    """One repeat's record from the records of its parts, each a closed loop measured between other runs' parts
    (lab.core.repeats.interleaved): ab's runs as one (lab.load.ab_output.merge), CPU seconds and counts added up and
    read per
    request and call again, peaks the highest, the services' figures per call weighed by their calls. A part with an
    error makes the repeat's."""
    failed = next((part for part in parts if "error" in part), None)
    if failed:
        return failed
    if len(parts) == 1:
        # A path whose round outlasts a part fills its repeat in one: an ordinary record, complete.
        whole = dict(parts[0], parts=1, **({"rounds": rounds(parts[0])} if parts[0].get("concurrency") else {}))
        return dict(whole, part_figures=[part_figures(parts[0])])
    reports = [_ab_report(part) for part in parts]
    curves: List[List[float]] = [part.get("latency_curve_ms") or [] for part in parts]
    curve = ab_output.merge_curves(curves, [r.completed for r in reports]) if all(curves) else None
    whole = dict(parts[0])
    whole.update(load_generator.ab_figures(path.expected_body(n), ab_output.merge(reports, curve), curve))
    whole["verified"] = dict(parts[0]["verified"], **whole["verified"])
    whole["requests"] = sum(part.get("requests") or 0 for part in parts)
    whole["ab_runs"] = sum(part.get("ab_runs") or 1 for part in parts)
    rss = {name: max(part["rss_mb"][name] for part in parts) for name in parts[0]["rss_mb"]}
    whole.update(resources(path, n, whole["completed"], _added_usage([part["cpu"] for part in parts]), rss))
    whole["rss_scope"] = "run" if all(part.get("rss_scope") == "run" for part in parts) else "since start"
    whole["server_side"] = _weighed([part["server_side"] for part in parts])
    whole["bytes_per_call"] = _weighed([part["bytes_per_call"] for part in parts])
    whole["raw"] = dict(parts[0]["raw"], parts=[part["raw"]["report"] for part in parts])
    whole["parts"] = len(parts)
    whole["rounds"] = sum(rounds(part) for part in parts)
    whole["part_figures"] = [part_figures(part) for part in parts]
    return whole


def part_figures(part: Dict) -> Dict:
    """What a repeat keeps of each of its parts: the samples a comparison of two runs tests (lab.results.compare)."""
    return {
        "rps": part["rps"],
        "p99": part["latency_ms"]["p99"],
        "cpu_us_per_call": round(records.path_cpu(part, "us_per_call"), 3) if part.get("cpu") else None,
    }


def rounds(record: Dict) -> int:
    """The whole rounds of concurrency requests a closed-loop record's ab runs sent (load_generator.requests_for)."""
    concurrency = record.get("concurrency") or 0
    return (record.get("requests") or 0) // concurrency if concurrency else 0


def _ab_report(record: Dict) -> ab_output.AbReport:
    """A part's ab figures as the report ab printed them, for lab.load.ab_output.merge."""
    completed, seconds = record["completed"], record["time_taken_s"]
    return ab_output.AbReport(
        concurrency=record["concurrency"],
        completed=completed,
        failed=record["failed"],
        failed_breakdown=dict(record["failed_breakdown"]),
        non2xx=record["non2xx"],
        time_taken_s=seconds,
        rps=record["rps"],
        mean_ms=record["latency_ms"]["mean"],
        mean_across_ms=seconds * 1e3 / completed if completed else 0.0,
        document_length=record["verified"]["response_bytes"],
        percentile_table_ms={int(k): v for k, v in record["latency_table_ms"].items()},
    )


def _added_usage(usages: List[Dict[str, Dict]]) -> Dict[str, Dict]:
    """lab.host.cpu.cpu_between's usage of several windows as one: seconds added up, percent over their wall time (each
    window's read back from the machine's seconds and percent)."""
    wall = sum(u["machine"]["seconds"] * 100 / u["machine"]["percent"] for u in usages if u["machine"]["percent"])
    added = {}
    for name in usages[0]:
        seconds = round(sum(u[name]["seconds"] for u in usages), 3)
        added[name] = dict(usages[0][name], seconds=seconds, percent=round(seconds / wall * 100, 1) if wall else None)
        own = [u[name].get("own_seconds") for u in usages]
        if "own_seconds" in usages[0][name]:
            added[name]["own_seconds"] = None if None in own else round(sum(o for o in own if o is not None), 3)
        # One part's failure to read the service's own counter is the whole run's (lab.results.check_results fails it).
        error = next((u[name]["own_error"] for u in usages if u[name].get("own_error")), None)
        if error:
            added[name]["own_error"] = error
            added[name].pop("own_seconds", None)
    return added


# A figure per something, and the count of that something: parts weigh their figures by it.
_PER = {
    "aggregator_ms_per_request": "aggregator_requests",
    "client_us_per_call": "downstream_calls",
    "square_us_per_call": "square_calls",
    "square_us_per_call_upper_bound": "square_calls",
    "request": "square_calls",
    "response": "square_calls",
}


def _weighed(parts: List[Dict]) -> Dict:
    """The server_side or bytes_per_call records of several parts as one: counts added up, figures per a count
    weighed by it, JIT times added up, anything else the first part's; a part with an error makes the whole's."""
    failed = next((part for part in parts if "error" in part), None)
    if failed:
        return failed
    whole = dict(parts[0])
    for key in parts[0]:
        values = [part.get(key) for part in parts]
        if key in _PER:
            weights: List[float] = [part.get(_PER[key]) or 0 for part in parts]
            numbers = [value for value in values if isinstance(value, (int, float))]
            known = len(numbers) == len(parts) and sum(weights) > 0
            whole[key] = round(sum(v * w for v, w in zip(numbers, weights)) / sum(weights), 3) if known else None
        elif key in repeats.SUMMED or key == "jit_compile_ms":
            whole[key] = repeats.merge(values, key, "sum")
    return whole


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
        present = [value for value in values if value is not None]
        return round(sum(present), 3) if values and len(present) == len(values) else None

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
    if record.get("part_figures"):
        summary["part_figures"] = record["part_figures"]
    # Each service's CPU as /proc and as its own counter read it (lab.target), where both were read.
    both = {
        name: {"proc_s": entry["seconds"], "own_s": entry["own_seconds"]}
        for name, entry in cpu_usage.items()
        if isinstance(entry, dict) and entry.get("own_seconds") is not None
    }
    if both:
        summary["cpu_read_twice"] = both
    compiled = (record.get("server_side") or {}).get("jit_compile_ms")
    if compiled:
        summary["jit_compile_ms"] = compiled
    wire = record.get("bytes_per_call") or {}
    if "request" in wire:
        summary["bytes_per_call"] = {"request": wire["request"], "response": wire["response"]}
    for key in (
        "requests",
        "time_taken_s",
        "parts",
        "rounds",
        "completed",
        "failed",
        "non2xx",
        "sent",
        "ok",
        "errors",
        "error",
    ):
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
            return metrics.total(metrics.scrape(urls[0]), "aggregator_admission_squares") == 0
        except metrics.MetricsError:
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
        return server_metrics.settle(path, metrics.scrape_all(urls), lambda: metrics.scrape_all(urls))[0], None
    except metrics.MetricsError as error:
        return None, str(error)


def _server_side(path: Path, urls: Dict[str, List[str]], before, error: Optional[str]) -> Dict:
    """The run's server_side record: the services' metric deltas, or an error saying why there are none."""
    if error:
        return {"error": "no server-side figures: %s" % error}
    try:
        return server_metrics.settle(path, before, lambda: metrics.scrape_all(urls))[1]
    except metrics.MetricsError as error:
        return {"error": "no server-side figures: %s" % error}


def figures(
    path: Path,
    n: int,
    report: ab_output.AbReport,
    curve: Optional[List[float]],
    usage: Dict[str, Dict],
    rss_mb: Dict[str, float],
) -> Dict:
    """The measured part of an ab run's record: counts, throughput, latency, CPU and memory."""
    return dict(
        resources(path, n, report.completed, usage, rss_mb),
        **load_generator.ab_figures(path.expected_body(n), report, curve),
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


def _per(amount: float, count: int) -> Optional[float]:
    return round(amount / count, 3) if count else None


def now() -> str:
    return datetime.datetime.now().astimezone().isoformat(timespec="seconds")


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
