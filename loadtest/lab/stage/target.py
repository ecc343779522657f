"""TARGET: measuring services the lab did not start, where they run: on another host, in a cluster, or on this
machine on other ports.

The lab starts nothing then. It finds the services from the aggregator's GET /actuator/info (where it calls the
square services: "rest-base-url" and "grpc-target"), or from TARGET_ACTUATORS where those addresses are not the ones
the lab can reach; it checks every path's exact answer as for its own services, and reads each service's CPU time and
resident memory from the service itself around each measured window:

- `actuator`: Micrometer's process CPU time counter (process_cpu_time_ns_total) and the resident-memory gauges
  (observation-meters: process_memory_resident_bytes, process_memory_resident_peak_bytes) on /actuator/prometheus,
  read right before and right after the window, as the lab reads /proc for its own services;
- `prometheus` (TARGET_PROMETHEUS): the same series from a Prometheus that scrapes them, which is how a cluster's
  pods are measured: every pod it scrapes of a service (by the `application` label on the pod's own page), each
  read from its last sample before the window to its first after it, the services idle on both sides.

A service's replicas' CPU adds up and its peak memory is its largest replica's, as for the lab's own. Every
service's /actuator/info says where it ran (host, pod, node, JDK, the cores it saw), and results.json keeps it beside
how its CPU was read.

The lab's own runs read the same counter beside /proc (lab.bench): the two agree within ticks (lab.check_results),
which is how a reading through this path is known to be the figure /proc gives.
"""

import json
import math
import re
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from typing import Dict, List, Mapping, Optional, Tuple

from ..core import catalogue, metrics
from ..core.catalogue import AGGREGATOR, SQUARE_GRPC, SQUARE_REST
from ..core.errors import LabError
from ..host.processes import wait_until
from ..load import http_check

CPU_METRIC = "process_cpu_time_ns_total"
RESIDENT = "process_memory_resident_bytes"
RESIDENT_PEAK = "process_memory_resident_peak_bytes"
# Only these families (a counter's family has no _total): the whole page costs the service more CPU, inside the
# window's edges.
STARTED = "process_start_time_seconds"
ONLY_COUNTERS = "?includedNames=" + ",".join(("process_cpu_time_ns", RESIDENT, RESIDENT_PEAK, STARTED))
ACTUATOR, PROMETHEUS, PROC = "actuator", "prometheus", "proc"
HOW_READ = {
    PROC: "/proc/<pid>/stat and VmHWM, on this machine",
    ACTUATOR: "the service's /actuator/prometheus: %s, %s" % (CPU_METRIC, RESIDENT_PEAK),
    PROMETHEUS: "Prometheus, each pod's samples of %s and %s just before and just after the window, by application"
    % (CPU_METRIC, RESIDENT_PEAK),
}
MIB = 1024 * 1024


@dataclass(frozen=True)
class Remote:
    """A service the lab did not start: its module, the actuators of its replicas, the base URL of the API the lab
    calls (the aggregator's; the REST square service's, for rest/square), and where each replica says it runs."""

    module: str
    actuators: List[str]
    base_url: Optional[str] = None
    where: List[Dict] = field(default_factory=list)
    # The first replica's whole GET /actuator/info (the stack it runs: lab.stage.target_stage.stack_of).
    info: Dict = field(default_factory=dict)

    @property
    def metrics_urls(self) -> List[str]:
        return [actuator + "/prometheus" for actuator in self.actuators]


def given_actuators(value: str, name: str = "TARGET_ACTUATORS") -> Dict[str, List[str]]:
    """TARGET_ACTUATORS: "module=url,module=url", a module's replicas each listed, each url its actuator's base
    (http://host:6566/actuator)."""
    found: Dict[str, List[str]] = {}
    for entry in [part.strip() for part in value.split(",") if part.strip()]:
        module, _, url = entry.partition("=")
        module, url = module.strip(), url.strip().rstrip("/")
        if module not in (AGGREGATOR, SQUARE_REST, SQUARE_GRPC) or not url:
            raise LabError(
                "%s takes module=actuator-URL entries, comma-separated, with module one of %s, %s, %s; got %r"
                % (name, AGGREGATOR, SQUARE_REST, SQUARE_GRPC, entry)
            )
        if not url.startswith(("http://", "https://")) or not url.endswith("/actuator"):
            raise LabError("%s: %s's actuator must be an http(s) URL ending in /actuator, got %r" % (name, module, url))
        found.setdefault(module, []).append(url)
    return found


def discover(
    target: str,
    given: Mapping[str, List[str]],
    paths: List[str],
    timeout_s: float = 10.0,
    wait_s: float = 0.0,
    prometheus: Optional["Prometheus"] = None,
) -> List[Remote]:
    """The services the paths need, found from the aggregator's /actuator/info at `target`, or given; each one's
    replicas answer UP (waited for up to wait_s, as services started beside the lab, a cluster's, may still be
    starting), and say where they run. With a Prometheus, a module's replicas are the pods it scrapes (a cluster's
    Service name would answer from any one of them)."""
    aggregator_url = target.rstrip("/")
    aggregator_actuator = (given.get(AGGREGATOR) or [aggregator_url + "/actuator"])[0]
    _wait_up(AGGREGATOR, aggregator_actuator, wait_s)
    info = read_json(aggregator_actuator + "/info", timeout_s)
    settings = info.get("aggregator")
    if not isinstance(settings, dict):
        raise LabError(
            '%s/info has no "aggregator" settings: TARGET must be this project\'s aggregator-service'
            % aggregator_actuator
        )
    needed = catalogue.services_needed(catalogue.ALL[name] for name in paths)
    found = [Remote(AGGREGATOR, list(given.get(AGGREGATOR) or [aggregator_url + "/actuator"]), aggregator_url)]
    rest_urls = [str(url).rstrip("/") for url in settings.get("rest-base-url") or []]
    # With a Prometheus the replicas are the pods it scrapes: the addresses info gives are not read then (and under
    # TLS could not tell the REST square service's actuator).
    by_address = not prometheus
    if SQUARE_REST in needed:
        actuators = given.get(SQUARE_REST) or [_rest_actuator(url) for url in rest_urls if by_address]
        if not actuators and by_address:
            raise _not_found(aggregator_url, SQUARE_REST, "rest-base-url")
        plain = [url for url in rest_urls if url.startswith("http://")]
        if "rest/square" in paths and not plain:
            raise LabError(
                "rest/square is ab straight to the REST square service in plaintext, and the aggregator calls it "
                "over TLS (%s): measure the paths without rest/square" % " ".join(rest_urls)
            )
        found.append(Remote(SQUARE_REST, list(actuators), plain[0] if plain else None))
    if SQUARE_GRPC in needed:
        targets = [one.strip() for one in str(settings.get("grpc-target") or "").split(",") if one.strip()]
        actuators = given.get(SQUARE_GRPC) or [_grpc_actuator(one) for one in targets if by_address]
        if not actuators and by_address:
            raise _not_found(aggregator_url, SQUARE_GRPC, "grpc-target")
        found.append(Remote(SQUARE_GRPC, list(actuators)))
    if prometheus:
        scraped = prometheus.actuators([remote.module for remote in found], wait_s)
        found = [
            Remote(remote.module, list(given.get(remote.module) or scraped[remote.module]), remote.base_url)
            for remote in found
        ]
    for remote in found:
        for actuator in remote.actuators:
            _wait_up(remote.module, actuator, wait_s)
    remotes = [_with_where(remote, timeout_s) for remote in found]
    if not prometheus:
        _refuse_pods_behind_one_address(remotes, given)
    return remotes


def _refuse_pods_behind_one_address(remotes: List[Remote], given: Mapping[str, List[str]]) -> None:
    """On Kubernetes a Service's name answers from any of its pods: reading a module's counters there would take
    one pod's before and another's after. The lab reads pods one by one: each listed, or found by a Prometheus."""
    for remote in remotes:
        if remote.module not in given and any(where.get("pod") for where in remote.where):
            raise LabError(
                "%s at %s runs in a pod (%s), behind an address that may answer from any of its replicas: give "
                "TARGET_PROMETHEUS, a Prometheus that scrapes every pod, or each pod's actuator in TARGET_ACTUATORS"
                % (remote.module, " ".join(remote.actuators), remote.where[0]["pod"])
            )


def _wait_up(module: str, actuator: str, wait_s: float) -> None:
    if wait_s and not wait_until(lambda: http_check.is_healthy(actuator + "/health"), wait_s, 1.0):
        raise LabError(
            "%s at %s did not answer UP within %d s (HEALTH_TIMEOUT): is it running, and reachable from here?"
            % (module, actuator, wait_s)
        )


def _rest_actuator(base_url: str) -> str:
    if not base_url.startswith("http://"):
        # Under TLS the REST square service's actuator is on a plaintext port of its own, which info cannot say.
        raise LabError(
            "the aggregator calls %s over TLS, and the REST square service's actuator is not on that port: give it "
            "with TARGET_ACTUATORS=square-rest-service=http://<host>:<management port>/actuator" % base_url
        )
    return base_url + "/actuator"


def _grpc_actuator(grpc_target: str) -> str:
    """The gRPC square service's actuator from its gRPC target: the next port, as the services' defaults have it
    (6565 and 6566); TARGET_ACTUATORS gives another."""
    address = grpc_target.split("///")[-1].split("://")[-1]
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise LabError(
            "cannot tell the gRPC square service's actuator from its target %r: give it with "
            "TARGET_ACTUATORS=square-grpc-service=http://<host>:<port>/actuator" % grpc_target
        )
    return "http://%s:%d/actuator" % (host, int(port) + 1)


def _not_found(aggregator_url: str, module: str, key: str) -> LabError:
    return LabError(
        "%s/actuator/info does not say where %s is (%s; an aggregator older than TARGET mode): give its actuator "
        "with TARGET_ACTUATORS=%s=http://<host>:<port>/actuator" % (aggregator_url, module, key, module)
    )


def _with_where(remote: Remote, timeout_s: float) -> Remote:
    """The remote with each replica's account of where it runs, and its first replica's whole info; every replica
    must answer UP first."""
    where, infos = [], []
    for actuator in remote.actuators:
        health = read_json(actuator + "/health", timeout_s)
        if health.get("status") != "UP":
            raise LabError("%s at %s is not UP: its health says %s" % (remote.module, actuator, json.dumps(health)))
        infos.append(read_json(actuator + "/info", timeout_s))
        where.append(dict(infos[-1].get("process") or {}, actuator=actuator))
    return Remote(remote.module, remote.actuators, remote.base_url, where, infos[0] if infos else {})


def read_json(url: str, timeout_s: float = 10.0) -> Dict:
    try:
        with urllib.request.urlopen(url, timeout=timeout_s) as response:
            found = json.load(response)
    except urllib.error.HTTPError as error:
        raise LabError("GET %s answered %d" % (url, error.code)) from None
    except (OSError, ValueError) as error:
        raise LabError("cannot read %s: %s" % (url, getattr(error, "reason", error))) from None
    if not isinstance(found, dict):
        raise LabError("GET %s did not answer a JSON object" % url)
    return found


@dataclass(frozen=True)
class Counters:
    """A service's process counters at one moment: its replicas' CPU seconds added up, and resident bytes now and at
    their peak since start of its largest replica (as lab.host.cpu reports the lab's own replicas' peak RSS); when each
    replica started, to tell a restart in the window."""

    cpu_s: float
    resident: float
    peak: float
    started: Tuple[float, ...] = ()


def read_counters(urls: Mapping[str, List[str]], timeout_s: float = 10.0) -> Dict[str, Counters]:
    """Each service's counters from its replicas' /actuator/prometheus, now."""
    found = {}
    for name, some in urls.items():
        replicas = [metrics.scrape(url + ONLY_COUNTERS, timeout_s) for url in some]
        missing = [url for url, samples in zip(some, replicas) if not any(s.name == CPU_METRIC for s in samples)]
        if missing:
            raise metrics.MetricsError(
                "%s exposes no %s (Micrometer's process.cpu.time) at %s" % (name, CPU_METRIC, " ".join(missing))
            )
        found[name] = Counters(
            sum(metrics.total(samples, CPU_METRIC) for samples in replicas) / 1e9,
            max(_bytes(samples, RESIDENT) for samples in replicas),
            max(_bytes(samples, RESIDENT_PEAK) for samples in replicas),
            tuple(metrics.total(samples, STARTED) for samples in replicas),
        )
    return found


def _bytes(samples, name: str) -> float:
    """A memory gauge, or 0 where the service could not read it (NaN on its page)."""
    value = metrics.total(samples, name)
    return value if math.isfinite(value) and value > 0 else 0.0


def usage_between(name: str, before: Counters, after: Counters, wall_s: float) -> Dict:
    """A service's CPU over a window from its own counters, as lab.host.cpu.cpu_between gives /proc's; a replica that
    restarted in the window has no figure to give."""
    if before.started != after.started:
        raise LabError("%s restarted during the measured window: its CPU time started again from 0" % name)
    seconds = round(after.cpu_s - before.cpu_s, 3)
    return {"seconds": seconds, "percent": round(seconds / wall_s * 100, 1) if wall_s > 0 else None, "read": ACTUATOR}


def peak_mib(before: Counters, after: Counters) -> Tuple[float, bool]:
    """(the highest resident memory known of the window in MiB, whether it is the window's own peak): the peak gauge
    when it rose in the window; else what it held at either end, the window's peak lying between that and the peak
    since start, which is what is reported then (as lab.host.cpu does where it cannot reset the peak)."""
    if not after.peak:
        return round(max(before.resident, after.resident) / MIB, 1), False
    return round(after.peak / MIB, 1), after.peak > before.peak


class Prometheus:
    """A Prometheus that scrapes the services (TARGET_PROMETHEUS): which pods it scrapes of each, and their counters
    around a window, by the `application` label Micrometer puts on every series. A window is read between real
    samples: the last scrape before it and the first after it, with the services idle on both sides (the lab waits a
    scrape interval before and after each window), so that what lies outside the window is idle CPU only."""

    def __init__(self, url: str, timeout_s: float = 30.0) -> None:
        self.url = url.rstrip("/")
        self.timeout_s = timeout_s
        self.scrape_interval_s = 0.0
        # Per application, the `instance` of each target found: only their series are read, not those of another
        # copy of the same services the same Prometheus may scrape (another environment, or a pod gone since).
        self.instances: Dict[str, set] = {}
        self.clock_offset_s = 0.0

    def _api(self, path: str, **query: str) -> Dict:
        url = "%s/api/v1/%s?%s" % (self.url, path, urllib.parse.urlencode(query))
        answer = read_json(url, self.timeout_s)
        if answer.get("status") != "success":
            raise LabError("Prometheus at %s refused %s: %s" % (self.url, path, answer.get("error")))
        return answer["data"]

    def actuators(self, modules: List[str], wait_s: float = 0.0) -> Dict[str, List[str]]:
        """Each module's replicas as the actuators Prometheus scrapes (each target's own page tells its application),
        waiting up to wait_s for it to have scraped one of each (a Prometheus started beside the services has not
        yet); the scrape interval is the longest of theirs."""
        found: Dict[str, List[str]] = {}
        unreachable: List[LabError] = []

        def every_module() -> bool:
            # A Prometheus that does not answer yet (its pod still starting beside the lab's) is waited for too.
            found.clear()
            unreachable.clear()
            try:
                found.update(self._scraped(modules))
            except LabError as problem:
                unreachable.append(problem)
                return False
            return all(found.values())

        wait_until(every_module, wait_s, 1.0)
        if unreachable:
            raise unreachable[0]
        self.clock_offset_s = self._clock_offset()
        missing = [module for module, actuators in found.items() if not actuators]
        if missing:
            raise LabError(
                "Prometheus at %s scrapes no healthy target of %s: it cannot measure %s"
                % (self.url, " or ".join(missing), "it" if len(missing) == 1 else "them")
            )
        return found

    def _scraped(self, modules: List[str]) -> Dict[str, List[str]]:
        targets = self._api("targets", state="active").get("activeTargets") or []
        found: Dict[str, List[str]] = {module: [] for module in modules}
        self.instances = {module: set() for module in modules}
        intervals = []
        for one in targets:
            url = str(one.get("scrapeUrl") or "")
            if not url.endswith("/actuator/prometheus") or one.get("health") != "up":
                continue
            try:
                samples = metrics.scrape(url + "?includedNames=process_cpu_time_ns", self.timeout_s)
            except metrics.MetricsError:
                continue
            application = next((s.labels.get("application") for s in samples if s.name == CPU_METRIC), None)
            if application in found:
                found[application].append(url[: -len("/prometheus")])
                self.instances[application].add(str((one.get("labels") or {}).get("instance") or ""))
                intervals.append(duration_s(str(one.get("scrapeInterval") or "15s")))
        self.scrape_interval_s = max(intervals, default=0.0)
        return found

    def _clock_offset(self) -> float:
        """How far Prometheus's clock is ahead of this machine's (another node's may be): its samples carry its own
        times, and a window's edges are this machine's, so they are moved by this much."""
        sent = time.time()
        answer = self._api("query", query="time()")
        received = time.time()
        return float(answer["result"][0]) - (sent + received) / 2

    def settle(self, sleep=time.sleep) -> None:
        """One scrape interval and a second: every service is scraped at least once while idle."""
        sleep(self.scrape_interval_s + 1.0)

    def window(self, applications: List[str], start: float, end: float) -> Dict[str, Dict]:
        """Per application: its CPU seconds over [start, end] (each pod's counter from its last sample before the
        window to its first after it, added up), its largest pod's resident peak, and the pods it found."""
        wall_s = end - start
        start, end = start + self.clock_offset_s, end + self.clock_offset_s
        cpu = self._samples(CPU_METRIC, start, end)
        peak = self._samples(RESIDENT_PEAK, start, end)
        found = {}
        for application in applications:
            pods = cpu.get(application) or {}
            if not pods:
                raise LabError(
                    "Prometheus at %s has no %s{application=%r} around the window" % (self.url, CPU_METRIC, application)
                )
            silent = sorted(self.instances.get(application, set()) - {instance for instance, _ in pods})
            if silent:
                raise LabError(
                    "Prometheus at %s has no %s of %s's %s around the window: was it scraping it throughout?"
                    % (self.url, CPU_METRIC, application, " ".join(silent))
                )
            seconds = sum(_across(values, start, end, application, pod) for (_, pod), values in pods.items()) / 1e9
            peaks = {pod: _edges(values, start, end) for pod, values in (peak.get(application) or {}).items()}
            found[application] = {
                "seconds": round(seconds, 3),
                "percent": round(seconds / wall_s * 100, 1) if wall_s > 0 else None,
                "read": PROMETHEUS,
                "scrape_interval_s": self.scrape_interval_s,
                "pods": sorted(pod for _, pod in pods),
                "peak_mib": _mib(max((after for _, after in peaks.values()), default=0.0)),
                # Whether every pod's peak rose in the window, so that it is the window's own and not an earlier one.
                "own_peak": bool(peaks) and all(after > before for before, after in peaks.values()),
            }
        return found

    def _samples(
        self, metric: str, start: float, end: float
    ) -> Dict[str, Dict[Tuple[str, str], List[Tuple[float, float]]]]:
        """Each application's pods' raw samples of a metric from two intervals before the window to now (a range
        vector keeps the scrapes' own times), by (instance, pod): one series per pod even where two jobs scrape it,
        and only the targets found (instances)."""
        now = max(time.time() + self.clock_offset_s, end + self.scrape_interval_s + 1.0)
        lookback = int(now - start + 2 * self.scrape_interval_s) + 1
        result = self._api("query", query="%s[%ds]" % (metric, lookback), time="%.3f" % now).get("result") or []
        found: Dict[str, Dict[Tuple[str, str], List[Tuple[float, float]]]] = {}
        for one in result:
            labels = one["metric"]
            application = labels.get("application", "?")
            known = self.instances.get(application)
            if known is not None and labels.get("instance", "") not in known:
                continue
            pods = found.setdefault(application, {})
            key = (labels.get("instance", ""), _pod(labels))
            # A NaN sample is a gauge the service could not read then: no reading, not a size.
            readings = [(float(at), float(value)) for at, value in one["values"]]
            pods.setdefault(key, [(at, value) for at, value in readings if math.isfinite(value)])
        return found


def _across(values: List[Tuple[float, float]], start: float, end: float, application: str, pod: str) -> float:
    """A counter's growth from its last sample at or before start to its first at or after end; a restart (the
    counter going down) or a missing side is an error, not a figure."""
    before, after = _edges(values, start, end, application, pod)
    between = [value for at, value in values if start - 0.001 <= at <= end + 0.001]
    if any(later < earlier for earlier, later in zip([before] + between, between + [after])):
        raise LabError(
            "%s's pod %s restarted around the measured window: its CPU time started again" % (application, pod)
        )
    return after - before


def _edges(
    values: List[Tuple[float, float]], start: float, end: float, application: str = "", pod: str = ""
) -> Tuple[float, float]:
    """(the last sample at or before start, the first at or after end)."""
    earlier = [value for at, value in values if at <= start]
    later = [value for at, value in values if at >= end]
    if not earlier or not later:
        raise LabError(
            "Prometheus has no sample of %s%s %s the measured window: is it scraping it?"
            % (application or "a service", " (pod %s)" % pod if pod else "", "before" if not earlier else "after")
        )
    return earlier[-1], later[0]


def _mib(value: float) -> Optional[float]:
    return round(value / MIB, 1) if value else None


def _pod(labels: Dict[str, str]) -> str:
    return labels.get("pod") or labels.get("instance") or "?"


def duration_s(text: str) -> float:
    """A Prometheus duration in seconds: 5s, 500ms, 1m30s."""
    units = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
    parts = re.findall(r"(\d+(?:\.\d+)?)(ms|s|m|h|d)", text)
    if not parts or "".join(number + unit for number, unit in parts) != text:
        raise LabError("not a Prometheus duration: %r" % text)
    return sum(float(number) * units[unit] for number, unit in parts)
