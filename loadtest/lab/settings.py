"""The lab's knobs: environment variables with defaults that replicate the article's `ab -n 1000 -c 100`.

KNOBS is the one place each knob's default and meaning are written; `loadtest/run.sh --help` prints it.
"""

import os
from dataclasses import asdict, dataclass, field
from typing import Dict, List, Mapping, Optional

from . import catalogue
from .errors import SettingsError

# The services' own JVM options, one per line with # comments, as `java @jvm.options` reads them; the lab's
# JAVA_OPTS defaults to them, so that what the lab measures is how the services start everywhere else.
JVM_OPTIONS_FILE = os.path.join(
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "jvm.options"
)


def service_jvm_options(path: str = JVM_OPTIONS_FILE) -> str:
    """The options in a `java @file` argument file, space-separated (one option per line, # starts a comment)."""
    with open(path, encoding="utf-8") as options:
        lines = [line.strip() for line in options]
    return " ".join(line for line in lines if line and not line.startswith("#"))


# (name, default, what it does): the defaults that are not empty are the lab's; an empty one leaves the
# setting to the service or the tool it is passed to.
KNOBS = (
    (
        "REQUESTS",
        "",
        "LOAD=closed: a fixed number of requests per measured ab run (the article's recipe: "
        "REQUESTS=1000); empty: as many as fill DURATION, in whole rounds of CONCURRENCY, counted from "
        "the warm-up's pace",
    ),
    ("CONCURRENCY", "100", "concurrent ab clients; a space-separated list sweeps"),
    ("N", "1000", "squares per request; a space-separated list sweeps"),
    ("PATHS", catalogue.DEFAULT, "paths to measure (also: rest/square, a baseline)"),
    (
        "PAYLOAD",
        catalogue.SMALL,
        "payload shapes each call carries: small (the article's call: no payload), wide, deep, "
        "collection; a space-separated list measures each",
    ),
    (
        "NETWORK",
        "loopback",
        "networks between the aggregator and the square services: loopback (direct), proxy "
        "(through Toxiproxy, no toxics), lan (0.5 ms round trip, 1 Gbit/s), wan (20 ms, 100 "
        "Mbit/s); a list measures each in turn, the aggregator restarted for each; all but "
        "loopback need Go",
    ),
    (
        "REST_SERVER",
        "netty",
        "Spring servers square-rest-service runs on: netty (WebFlux, its default), tomcat, jetty "
        "(Spring MVC); a list measures the REST paths on each in turn, the services restarted for "
        "each",
    ),
    (
        "REST_CLIENT",
        "reactor-netty",
        "the aggregator's REST connectors: reactor-netty (direct), webclient (WebClient "
        "over Reactor Netty), jetty, apache, jdk (WebClient over each; jdk: HTTP/1.1 "
        "only); a list measures the REST paths with each in turn",
    ),
    (
        "JAVA_HOMES",
        "",
        "installed JDKs (their folders) to run every service on, each in turn; empty: the lab's own "
        "java (JAVA_HOME, else the java on PATH)",
    ),
    (
        "VIRTUAL_THREADS",
        "off",
        "on: the services' request threads are virtual (spring.threads.virtual.enabled; "
        "Tomcat and Jetty, JDK 21 or newer)",
    ),
    (
        "REPEATS",
        "3",
        "times each combination is measured, interleaved (round 1 runs every combination once, then "
        "round 2...); a run reports the median of its repeats and their spread",
    ),
    (
        "LOAD",
        "closed",
        "closed: ab, CONCURRENCY clients each waiting for its answer (the article's way); open: "
        "Vegeta sends RATE requests a second whatever the answers, latency from each request's "
        "intended send time",
    ),
    ("RATE", "50", "LOAD=open: requests per second; a space-separated list sweeps"),
    (
        "DURATION",
        "20",
        "seconds each measured run lasts, whatever the path's pace: Vegeta sends for that long "
        "(LOAD=open), ab runs whole rounds until it is filled (unless REQUESTS is set); with "
        "LOAD=open, 120 or more is a soak: each run also reports per minute each service's RSS and heap "
        "after a full GC and the path's p99",
    ),
    (
        "MIX",
        "",
        'paths to load at the same time after the measurements, e.g. "grpc/unary grpc/stream" (each '
        "also in PATHS): on the first stack and network, at each N, each with CONCURRENCY clients for as long "
        "as the slowest took alone (LOAD=open: at RATE for DURATION); reports each one's goodput, p99 and "
        "non-200 answers beside its figures alone; empty: no mix",
    ),
    (
        "WARMUP_SECONDS",
        "10",
        "seconds of load at the measured concurrency (or rate) before a combination's first "
        "repeat, discarded, and before each floor run: both measured warm (0: none)",
    ),
    ("AB_TIMEOUT", "120", "seconds ab waits for one response"),
    ("RESULTS_DIR", "", "where the results go (default loadtest/results/<timestamp>)"),
    (
        "JAVA_OPTS",
        service_jvm_options(),
        "JVM options of every service and of the floor; the default is the "
        "repository's jvm.options, which every way of starting the services uses",
    ),
    (
        "AGGREGATOR_ARGS",
        "",
        "extra Spring arguments for the aggregator, e.g. --aggregator.in-flight=64 (the lab "
        "sets --aggregator.deadline=<AB_TIMEOUT>s unless this sets it)",
    ),
    ("AGGREGATOR_PORT", "8080", "the aggregator's port on 127.0.0.1"),
    ("SQUARE_REST_PORT", "7575", "the REST square service's port (replica r: + r - 1)"),
    ("SQUARE_GRPC_PORT", "6565", "the gRPC square service's port (replica r: + 2 (r - 1))"),
    ("SQUARE_GRPC_ACTUATOR_PORT", "6566", "the gRPC square service's actuator port (replica r: + 2 (r - 1))"),
    ("TOXIPROXY_PORT", "8474", "NETWORK other than loopback: Toxiproxy's API port on 127.0.0.1"),
    (
        "PROXY_PORT",
        "7700",
        "NETWORK other than loopback: the first proxy's port; one proxy per square-service "
        "instance (REST replicas, then gRPC), on consecutive ports",
    ),
    ("REPLICAS", "1", "replicas of each square service; the aggregator spreads its calls over all of them"),
    ("HEALTH_TIMEOUT", "180", "seconds to wait for the services to become healthy"),
    ("LAB_SKIP_BUILD", "0", "1: never run Maven (the Maven build sets it: the jars are fresh there)"),
    (
        "PROMETHEUS",
        "0",
        "1: also run a real Prometheus beside the lab (monitoring/run-prometheus.sh), to browse "
        "the services' metrics live while the lab runs",
    ),
    ("PROMETHEUS_PORT", "9090", "its port on 127.0.0.1"),
    (
        "FLOOR",
        "1",
        "1 (LOAD=closed only): after the paths, with the services stopped, run the bare transports "
        "(transport-floor) with the aggregator's window and JAVA_OPTS, REPEATS times; the report shows each "
        "path's fraction of its floor",
    ),
    ("FLOOR_DURATION", "10", "seconds each floor run measures"),
)
DEFAULTS = {name: default for name, default, _ in KNOBS}

# Replica r of a square service listens on its port + (r - 1) (REST) or + 2 (r - 1) (gRPC and its actuator).
MAX_REPLICAS = 8


@dataclass
class Settings:
    # None: as many as fill duration_s (lab.bench.requests_for).
    requests: Optional[int]
    concurrency: List[int]
    n: List[int]
    paths: List[str]
    warmup_s: float
    ab_timeout_s: int
    repeats: int = 3
    payload: List[str] = field(default_factory=lambda: [catalogue.SMALL])
    network: List[str] = field(default_factory=lambda: ["loopback"])
    rest_server: List[str] = field(default_factory=lambda: ["netty"])
    rest_client: List[str] = field(default_factory=lambda: ["reactor-netty"])
    mix: List[str] = field(default_factory=list)
    java_homes: List[str] = field(default_factory=list)
    virtual_threads: bool = False
    load: str = "closed"
    rate: List[int] = field(default_factory=lambda: [50])
    duration_s: float = 20.0
    floor: bool = True
    floor_duration_s: float = 10.0
    replicas: int = 1
    java_opts: str = ""
    aggregator_args: str = ""
    aggregator_port: int = 8080
    square_rest_port: int = 7575
    square_grpc_port: int = 6565
    square_grpc_actuator_port: int = 6566
    toxiproxy_port: int = 8474
    proxy_port: int = 7700
    health_timeout_s: int = 180
    skip_build: bool = False
    prometheus: bool = False
    prometheus_port: int = 9090
    results_dir: Optional[str] = None

    @classmethod
    def from_env(cls, env: Mapping[str, str] = os.environ) -> "Settings":
        def knob(name: str) -> str:
            value = env.get(name, "").strip()
            return value if value else DEFAULTS[name]

        settings = cls(
            requests=_positive(knob("REQUESTS"), "REQUESTS") if knob("REQUESTS") else None,
            concurrency=[_positive(v, "CONCURRENCY") for v in knob("CONCURRENCY").split()],
            n=[_non_negative(v, "N") for v in knob("N").split()],
            paths=[p.name for p in _paths(knob("PATHS"))],
            payload=_payloads(knob("PAYLOAD")),
            network=_networks(knob("NETWORK")),
            rest_server=_choices(knob("REST_SERVER"), "REST_SERVER", "server", catalogue.REST_SERVERS),
            rest_client=_choices(knob("REST_CLIENT"), "REST_CLIENT", "client", catalogue.REST_CLIENTS),
            mix=_mix(knob("MIX")),
            java_homes=list(dict.fromkeys(knob("JAVA_HOMES").split())),
            virtual_threads=_choice(knob("VIRTUAL_THREADS"), "VIRTUAL_THREADS", ("off", "on")) == "on",
            warmup_s=_seconds(knob("WARMUP_SECONDS"), "WARMUP_SECONDS", positive=False),
            ab_timeout_s=_positive(knob("AB_TIMEOUT"), "AB_TIMEOUT"),
            repeats=_positive(knob("REPEATS"), "REPEATS"),
            load=_choice(knob("LOAD"), "LOAD", ("closed", "open")),
            rate=[_positive(v, "RATE") for v in knob("RATE").split()],
            duration_s=_seconds(knob("DURATION"), "DURATION", positive=True),
            floor=_switch(knob("FLOOR"), "FLOOR"),
            floor_duration_s=_seconds(knob("FLOOR_DURATION"), "FLOOR_DURATION", positive=True),
            replicas=_positive(knob("REPLICAS"), "REPLICAS"),
            # JAVA_OPTS may be set empty on purpose: JVM defaults.
            java_opts=env["JAVA_OPTS"] if "JAVA_OPTS" in env else DEFAULTS["JAVA_OPTS"],
            aggregator_args=knob("AGGREGATOR_ARGS"),
            aggregator_port=_port(knob("AGGREGATOR_PORT"), "AGGREGATOR_PORT"),
            square_rest_port=_port(knob("SQUARE_REST_PORT"), "SQUARE_REST_PORT"),
            square_grpc_port=_port(knob("SQUARE_GRPC_PORT"), "SQUARE_GRPC_PORT"),
            square_grpc_actuator_port=_port(knob("SQUARE_GRPC_ACTUATOR_PORT"), "SQUARE_GRPC_ACTUATOR_PORT"),
            toxiproxy_port=_port(knob("TOXIPROXY_PORT"), "TOXIPROXY_PORT"),
            proxy_port=_port(knob("PROXY_PORT"), "PROXY_PORT"),
            health_timeout_s=_positive(knob("HEALTH_TIMEOUT"), "HEALTH_TIMEOUT"),
            skip_build=_switch(knob("LAB_SKIP_BUILD"), "LAB_SKIP_BUILD"),
            prometheus=_switch(knob("PROMETHEUS"), "PROMETHEUS"),
            prometheus_port=_port(knob("PROMETHEUS_PORT"), "PROMETHEUS_PORT"),
            results_dir=knob("RESULTS_DIR") or None,
        )
        if settings.replicas > MAX_REPLICAS:
            raise SettingsError("REPLICAS must be at most %d, got %d" % (MAX_REPLICAS, settings.replicas))
        settings._check_combinations()
        return settings

    @property
    def open_loop(self) -> bool:
        return self.load == "open"

    @property
    def proxied(self) -> bool:
        """Whether a network of NETWORK goes through Toxiproxy."""
        return any(catalogue.PROFILES[name].proxied for name in self.network)

    def combinations(self):
        """(path, payload, n, concurrency or rate) of every run on one network, in the order one round runs them;
        every network (NETWORK) measures all of them, one network after the other."""
        points = self.rate if self.open_loop else self.concurrency
        return [(p, shape, n, point) for p in self.paths for shape in self.payload for n in self.n for point in points]

    def as_dict(self) -> Dict:
        """What results.json records of them: the measuring knobs, not where the services listened."""
        recorded = (
            "requests",
            "duration_s",
            "concurrency",
            "n",
            "paths",
            "warmup_s",
            "ab_timeout_s",
            "floor",
            "floor_duration_s",
            "replicas",
            "java_opts",
            "aggregator_args",
            "repeats",
            "load",
            "payload",
            "network",
            "rest_server",
            "rest_client",
            "java_homes",
            "virtual_threads",
            "mix",
        )
        found = {key: value for key, value in asdict(self).items() if key in recorded}
        if self.open_loop:
            # An open loop has no fixed number of requests or clients: a rate and a duration instead.
            found.update(rate=self.rate, duration_s=self.duration_s, requests=None, concurrency=[])
        return found

    def _check_combinations(self) -> None:
        if len(set(self.rate)) != len(self.rate):
            raise SettingsError("RATE must not repeat a value")
        if self.open_loop and self.floor:
            # The floor keeps the aggregator's window of a closed loop in flight; an open loop has no fixed one.
            self.floor = False
        if catalogue.SMALL not in self.payload or "loopback" not in self.network:
            # The bare transports carry the article's small call on loopback: nothing else has a floor to compare with.
            self.floor = False
        if "rest/square" in self.paths and self.payload != [catalogue.SMALL]:
            raise SettingsError(
                "rest/square is a baseline straight to square-rest-service and carries no payload "
                "shape: measure it with PAYLOAD=small, or the shapes without it"
            )
        if "rest/square" in self.paths and self.network != ["loopback"]:
            raise SettingsError(
                "rest/square does not go through the aggregator, so NETWORK does not reach it: "
                "measure it with NETWORK=loopback, or the networks without it"
            )
        not_measured = [name for name in self.mix if name not in self.paths]
        if not_measured:
            raise SettingsError(
                "MIX names %s, which PATHS does not measure: each mixed path is compared with its "
                "figures alone from the same run, so add it to PATHS" % " ".join(not_measured)
            )
        last_proxy_port = self.proxy_port + 2 * self.replicas - 1
        if self.proxied and last_proxy_port > 65535:
            raise SettingsError(
                "PROXY_PORT %d leaves no room for %d proxies below port 65535" % (self.proxy_port, 2 * self.replicas)
            )
        if not self.open_loop and not self.requests and not self.warmup_s:
            raise SettingsError(
                "WARMUP_SECONDS=0 leaves DURATION no pace to count ab's requests from: set REQUESTS "
                "(e.g. REQUESTS=1000), or a warm-up"
            )
        too_many = [c for c in self.concurrency if self.requests and c > self.requests]
        if too_many:
            raise SettingsError(
                "CONCURRENCY %s is above REQUESTS=%d: ab needs at least one request per client"
                % (" ".join(map(str, too_many)), self.requests)
            )
        if len(set(self.concurrency)) != len(self.concurrency) or len(set(self.n)) != len(self.n):
            raise SettingsError("CONCURRENCY and N must not repeat a value")
        for name in self.paths:
            if catalogue.ALL[name].target != catalogue.AGGREGATOR:
                too_big = [n for n in self.n if n > 2**31 - 1]
                if too_big:
                    raise SettingsError("N %s is not a 32-bit number for path %s" % (too_big, name))


def usage() -> str:
    """The knobs, as `loadtest/run.sh --help` lists them."""
    lines = ["Knobs are environment variables (defaults replicate the article's `ab -n 1000 -c 100`):"]
    for name, default, meaning in KNOBS:
        lines.append("  %-26s %s%s" % (name, meaning, "  [%s]" % default if default else ""))
    return "\n".join(lines)


def _number(value: str, name: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise SettingsError(
            "%s must be a whole number (or a space-separated list for CONCURRENCY and N), got %r" % (name, value)
        ) from None


def _positive(value: str, name: str) -> int:
    number = _number(value, name)
    if number < 1:
        raise SettingsError("%s must be at least 1, got %d" % (name, number))
    return number


def _non_negative(value: str, name: str) -> int:
    number = _number(value, name)
    if number < 0:
        raise SettingsError("%s must not be negative, got %d" % (name, number))
    return number


def _port(value: str, name: str) -> int:
    number = _positive(value, name)
    if number > 65535:
        raise SettingsError("%s must be a port number up to 65535, got %d" % (name, number))
    return number


def _choice(value: str, name: str, choices) -> str:
    if value not in choices:
        raise SettingsError("%s must be one of %s, got %r" % (name, ", ".join(choices), value))
    return value


def _switch(value: str, name: str) -> bool:
    if value not in ("0", "1"):
        raise SettingsError("%s must be 0 or 1, got %r" % (name, value))
    return value == "1"


def _seconds(value: str, name: str, positive: bool) -> float:
    try:
        seconds = float(value)
    except ValueError:
        raise SettingsError("%s must be a number of seconds such as 10 or 0.5, got %r" % (name, value)) from None
    if seconds < 0 or (positive and seconds == 0):
        raise SettingsError("%s must be %s, got %r" % (name, "more than 0" if positive else "0 or more", value))
    return seconds


def _payloads(value: str) -> List[str]:
    try:
        return catalogue.parse_payloads(value)
    except ValueError as error:
        raise SettingsError(str(error)) from None


def _choices(value: str, knob: str, what: str, known) -> List[str]:
    try:
        return catalogue.parse_choices(value, knob, what, known)
    except ValueError as error:
        raise SettingsError(str(error)) from None


def _networks(value: str) -> List[str]:
    """The networks named in NETWORK, in the order given, each once."""
    chosen = []
    for name in value.split():
        if name not in catalogue.NETWORKS:
            raise SettingsError(
                "unknown network %r in NETWORK; known networks: %s" % (name, " ".join(catalogue.NETWORKS))
            )
        if name not in chosen:
            chosen.append(name)
    return chosen


def _paths(value: str):
    try:
        return catalogue.parse(value)
    except ValueError as error:
        raise SettingsError(str(error)) from None


def _mix(value: str) -> List[str]:
    """The paths MIX loads at the same time: none, or at least two known ones, each once."""
    if not value.strip():
        return []
    try:
        chosen = catalogue.parse_choices(value, "MIX", "path", tuple(catalogue.ALL))
    except ValueError as error:
        raise SettingsError(str(error)) from None
    if len(chosen) < 2:
        raise SettingsError(
            "MIX loads paths at the same time, so it needs at least two, got %r; known paths: %s"
            % (value.strip(), " ".join(catalogue.ALL))
        )
    return chosen
