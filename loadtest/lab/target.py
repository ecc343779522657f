"""TARGET: measuring services the lab did not start, where they run: on another host, in a cluster, or on this
machine on other ports.

The lab starts nothing then. It finds the services from the aggregator's GET /actuator/info (where it calls the
square services: "rest-base-url" and "grpc-target"), or from TARGET_ACTUATORS where those addresses are not the ones
the lab can reach; it checks every path's exact answer as for its own services, and reads each service's CPU time and
resident memory from the service itself over exactly each measured window:

- `actuator`: Micrometer's process CPU time counter (process_cpu_time_ns_total) and the resident-memory gauges
  (observation-meters: process_memory_resident_bytes, process_memory_resident_peak_bytes) on /actuator/prometheus,
  read right before and right after the window, as the lab reads /proc for its own services;
- `prometheus` (TARGET_PROMETHEUS): the same series from Prometheus over the window (query_range), which is how a
  cluster's pods are measured: every pod of a service, by its `application` label.

A service's replicas add up, as they do for the lab's own. Every service's /actuator/info says where it ran (host,
pod, node, JDK, the cores it saw), and results.json keeps it beside how its CPU was read.

The lab's own runs read the same counter beside /proc (lab.bench): the two agree within a tick (lab.check_results),
which is how a reading through this path is known to be the figure /proc gives.
"""

import json
import math
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from typing import Dict, List, Mapping, Optional, Tuple

from . import catalogue, http_check, server_metrics
from .catalogue import AGGREGATOR, SQUARE_GRPC, SQUARE_REST
from .errors import LabError
from .processes import wait_until

CPU_METRIC = "process_cpu_time_ns_total"
RESIDENT = "process_memory_resident_bytes"
RESIDENT_PEAK = "process_memory_resident_peak_bytes"
# Only these families (a counter's family has no _total): the whole page costs the service more CPU, inside the
# window's edges.
ONLY_COUNTERS = "?includedNames=" + ",".join(("process_cpu_time_ns", RESIDENT, RESIDENT_PEAK))
ACTUATOR, PROMETHEUS, PROC = "actuator", "prometheus", "proc"
HOW_READ = {
    PROC: "/proc/<pid>/stat and VmHWM, on this machine",
    ACTUATOR: "the service's /actuator/prometheus: %s, %s" % (CPU_METRIC, RESIDENT_PEAK),
    PROMETHEUS: "Prometheus query_range over the window: %s, %s by application" % (CPU_METRIC, RESIDENT_PEAK),
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
    target: str, given: Mapping[str, List[str]], paths: List[str], timeout_s: float = 10.0, wait_s: float = 0.0
) -> List[Remote]:
    """The services the paths need, found from the aggregator's /actuator/info at `target`, or given; each one's
    replicas answer UP (waited for up to wait_s, as services started beside the lab, a cluster's, may still be
    starting), and say where they run."""
    aggregator_url = target.rstrip("/")
    _wait_up(AGGREGATOR, (given.get(AGGREGATOR) or [aggregator_url + "/actuator"])[0], wait_s)
    info = read_json(aggregator_url + "/actuator/info", timeout_s)
    settings = info.get("aggregator")
    if not isinstance(settings, dict):
        raise LabError(
            '%s/actuator/info has no "aggregator" settings: TARGET must be this project\'s aggregator-service'
            % aggregator_url
        )
    needed = catalogue.services_needed(catalogue.ALL[name] for name in paths)
    found = [Remote(AGGREGATOR, list(given.get(AGGREGATOR) or [aggregator_url + "/actuator"]), aggregator_url)]
    rest_urls = [str(url).rstrip("/") for url in settings.get("rest-base-url") or []]
    if SQUARE_REST in needed:
        actuators = given.get(SQUARE_REST) or [_rest_actuator(url) for url in rest_urls]
        if not actuators:
            raise _not_found(aggregator_url, SQUARE_REST, "rest-base-url")
        plain = [url for url in rest_urls if url.startswith("http://")]
        found.append(Remote(SQUARE_REST, list(actuators), plain[0] if plain else None))
    if SQUARE_GRPC in needed:
        targets = [one.strip() for one in str(settings.get("grpc-target") or "").split(",") if one.strip()]
        actuators = given.get(SQUARE_GRPC) or [_grpc_actuator(one) for one in targets]
        if not actuators:
            raise _not_found(aggregator_url, SQUARE_GRPC, "grpc-target")
        found.append(Remote(SQUARE_GRPC, list(actuators)))
    for remote in found:
        for actuator in remote.actuators:
            _wait_up(remote.module, actuator, wait_s)
    return [_with_where(remote, timeout_s) for remote in found]


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
    """The remote with each replica's account of where it runs; every replica must answer UP first."""
    where = []
    for actuator in remote.actuators:
        health = read_json(actuator + "/health", timeout_s)
        if health.get("status") != "UP":
            raise LabError("%s at %s is not UP: its health says %s" % (remote.module, actuator, json.dumps(health)))
        process = read_json(actuator + "/info", timeout_s).get("process") or {}
        where.append(dict(process, actuator=actuator))
    return Remote(remote.module, remote.actuators, remote.base_url, where)


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
    """A service's process counters at one moment, its replicas added up: CPU seconds and resident bytes, now and
    at their peak since start."""

    cpu_s: float
    resident: float
    peak: float


def read_counters(urls: Mapping[str, List[str]], timeout_s: float = 10.0) -> Dict[str, Counters]:
    """Each service's counters from its replicas' /actuator/prometheus, now."""
    found = {}
    for name, some in urls.items():
        samples = [sample for url in some for sample in server_metrics.scrape(url + ONLY_COUNTERS, timeout_s)]
        if not any(sample.name == CPU_METRIC for sample in samples):
            raise server_metrics.MetricsError(
                "%s exposes no %s (Micrometer's process.cpu.time) at %s" % (name, CPU_METRIC, " ".join(some))
            )
        found[name] = Counters(
            server_metrics.total(samples, CPU_METRIC) / 1e9,
            server_metrics.total(samples, RESIDENT),
            server_metrics.total(samples, RESIDENT_PEAK),
        )
    return found


def usage_between(before: Counters, after: Counters, wall_s: float) -> Dict:
    """A service's CPU over a window from its own counters, as lab.cpu.cpu_between gives /proc's."""
    seconds = round(after.cpu_s - before.cpu_s, 3)
    return {"seconds": seconds, "percent": round(seconds / wall_s * 100, 1) if wall_s > 0 else None, "read": ACTUATOR}


def peak_mib(before: Counters, after: Counters) -> Tuple[float, bool]:
    """(the highest resident memory known of the window in MiB, whether it is the window's own peak): the peak gauge
    when it rose in the window; else what it held at either end, the window's peak lying between that and the peak
    since start, which is what is reported then (as lab.cpu does where it cannot reset the peak)."""
    if not after.peak:
        return round(max(before.resident, after.resident) / MIB, 1), False
    return round(after.peak / MIB, 1), after.peak > before.peak


class Prometheus:
    """A Prometheus that scrapes the services (TARGET_PROMETHEUS): their counters over a window, by the `application`
    label Micrometer puts on every series."""

    def __init__(self, url: str, timeout_s: float = 30.0) -> None:
        self.url = url.rstrip("/")
        self.timeout_s = timeout_s
        self.scrape_interval_s = self._scrape_interval()

    def _api(self, path: str, **query: str) -> Dict:
        url = "%s/api/v1/%s?%s" % (self.url, path, urllib.parse.urlencode(query))
        answer = read_json(url, self.timeout_s)
        if answer.get("status") != "success":
            raise LabError("Prometheus at %s refused %s: %s" % (self.url, path, answer.get("error")))
        return answer["data"]

    def _scrape_interval(self) -> float:
        """The longest scrape interval of its active targets: how long after a window its last sample is due."""
        targets = self._api("targets", state="active").get("activeTargets") or []
        intervals = [_duration_s(one.get("scrapeInterval") or "15s") for one in targets]
        if not intervals:
            raise LabError("Prometheus at %s scrapes no target: it cannot measure the services" % self.url)
        return max(intervals)

    def wait_for_window(self, end: float, sleep=time.sleep) -> None:
        """Until every target has been scraped after the window's end (one interval, and a second of slack)."""
        sleep(max(0.0, end + self.scrape_interval_s + 1.0 - time.time()))

    def series(self, metric: str, start: float, end: float) -> List[Dict]:
        """Every series of a metric between start and end (Unix seconds), a point per second, with one interval's
        margin on each side so that the window's ends lie between samples."""
        margin = self.scrape_interval_s
        return (
            self._api(
                "query_range", query=metric, start="%.3f" % (start - margin), end="%.3f" % (end + margin), step="1s"
            ).get("result")
            or []
        )

    def window(self, applications: List[str], start: float, end: float) -> Dict[str, Dict]:
        """Per application: its CPU seconds over [start, end] (every pod's counter, each at the window's ends, added
        up), its highest resident peak, and the pods it found."""
        cpu = self.series(CPU_METRIC, start, end)
        peak = self.series(RESIDENT_PEAK, start, end)
        found = {}
        for application in applications:
            own = [one for one in cpu if one["metric"].get("application") == application]
            if not own:
                raise LabError(
                    "Prometheus at %s has no %s{application=%r} over the window" % (self.url, CPU_METRIC, application)
                )
            seconds = sum(counter_at(one["values"], end) - counter_at(one["values"], start) for one in own) / 1e9
            # Each pod's peak gauge over the window, from its last sample before it to the first after it.
            pods_peaks = [
                [float(value) for at, value in one["values"]]
                for one in peak
                if one["metric"].get("application") == application and one["values"]
            ]
            peaks = [max(values) for values in pods_peaks]
            found[application] = {
                "seconds": round(seconds, 3),
                "percent": round(seconds / (end - start) * 100, 1) if end > start else None,
                "read": PROMETHEUS,
                "scrape_interval_s": self.scrape_interval_s,
                # Each pod's peak in the window, added up as a module's replicas are.
                "peak_mib": round(sum(peaks) / MIB, 1) if peaks else None,
                # Whether every pod's peak rose in the window, so that it is the window's own and not an earlier one.
                "own_peak": bool(pods_peaks) and all(values[-1] > values[0] for values in pods_peaks),
                "pods": sorted({_pod(one["metric"]) for one in own}),
            }
        return found


def _pod(labels: Dict[str, str]) -> str:
    return labels.get("pod") or labels.get("instance") or "?"


def counter_at(values: List, moment: float) -> float:
    """A counter's value at a moment, from a query_range's [time, value] points: Prometheus repeats a sample at every
    step until the next scrape, so each distinct value is taken at the first step that shows it (its scrape, within a
    step) and the counter is interpolated between the two scrapes around the moment."""
    scrapes: List[Tuple[float, float]] = []
    for at, value in values:
        number = float(value)
        if not scrapes or number != scrapes[-1][1]:
            scrapes.append((float(at), number))
    if not scrapes:
        return math.nan
    earlier = [point for point in scrapes if point[0] <= moment]
    later = [point for point in scrapes if point[0] > moment]
    if not earlier:
        return scrapes[0][1]
    if not later:
        return earlier[-1][1]
    (t0, v0), (t1, v1) = earlier[-1], later[0]
    return v0 + (v1 - v0) * (moment - t0) / (t1 - t0)


def _duration_s(text: str) -> float:
    units = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
    for unit in ("ms", "s", "m", "h"):
        if text.endswith(unit) and text[: -len(unit)].replace(".", "", 1).isdigit():
            return float(text[: -len(unit)]) * units[unit]
    raise LabError("not a Prometheus duration: %r" % text)
