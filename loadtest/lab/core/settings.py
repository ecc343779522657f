"""The lab's knobs: environment variables with defaults that replicate the article's `ab -n 1000 -c 100`.

KNOBS is the one table of them: each row gives a knob's default, how it is read, the Settings field it fills, whether
results.json records it, and its meaning; `--help` (usage), Settings.from_env, Settings.as_dict and the README's knob
table (markdown, `python3 -m lab knobs --markdown`) all come from it.
"""

import os
import re
import textwrap
from dataclasses import asdict, dataclass
from typing import Any, Callable, Dict, List, Mapping, Optional

from . import catalogue, gates, knee
from .errors import SettingsError
from .paths import JVM_OPTIONS

# The services' own JVM options, one per line with # comments, as `java @jvm.options` reads them; the lab's
# JAVA_OPTS defaults to them, so that what the lab measures is how the services start everywhere else.
JVM_OPTIONS_FILE = JVM_OPTIONS

# Replica r of a square service listens on its port + (r - 1) (REST) or + 2 (r - 1) (gRPC and its actuator).
MAX_REPLICAS = 8

# A repeat measured by time is cut into parts of about PART_S (up to MAX_PARTS), interleaved with the other
# repeats' and paths' parts: this machine's speed steps by up to a quarter for a minute at a time (the same work
# cost both services 20 % more CPU from one minute to the next), and a repeat measured in one stretch took it whole.
PART_S = 5.0
MAX_PARTS = 4


def service_jvm_options(path: str = JVM_OPTIONS_FILE) -> str:
    """The options in a `java @file` argument file, space-separated (one option per line, # starts a comment)."""
    with open(path, encoding="utf-8") as options:
        lines = [line.strip() for line in options]
    return " ".join(line for line in lines if line and not line.startswith("#"))


@dataclass(frozen=True)
class Knob:
    """One environment variable: its default (empty leaves the setting to the service or tool it is passed to), how
    its value is read into the Settings field it fills, and whether results.json records that field."""

    name: str
    default: str
    field: str
    # (value, knob's name) -> the field's value; raises SettingsError (or ValueError) naming the knob.
    parse: Callable[[str, str], Any]
    meaning: str
    recorded: bool = False
    # The README section that says more, by its title.
    see: str = ""
    # The README's words for a default that is empty or long.
    default_text: str = ""
    # Set, even empty, the variable replaces the default (JAVA_OPTS="": the JVM's own defaults).
    set_empty: bool = False


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


def _replicas(value: str, name: str) -> int:
    number = _positive(value, name)
    if number > MAX_REPLICAS:
        raise SettingsError("%s must be at most %d, got %d" % (name, MAX_REPLICAS, number))
    return number


def _switch(value: str, name: str) -> bool:
    if value not in ("0", "1"):
        raise SettingsError("%s must be 0 or 1, got %r" % (name, value))
    return value == "1"


def _seconds(value: str, name: str, positive: bool = True) -> float:
    try:
        seconds = float(value)
    except ValueError:
        raise SettingsError("%s must be a number of seconds such as 10 or 0.5, got %r" % (name, value)) from None
    if seconds < 0 or (positive and seconds == 0):
        raise SettingsError("%s must be %s, got %r" % (name, "more than 0" if positive else "0 or more", value))
    return seconds


def _seconds_or_zero(value: str, name: str) -> float:
    return _seconds(value, name, positive=False)


def _choice(*choices: str) -> Callable[[str, str], str]:
    def parse(value: str, name: str) -> str:
        if value not in choices:
            raise SettingsError("%s must be one of %s, got %r" % (name, ", ".join(choices), value))
        return value

    return parse


def _each(parse: Callable[[str, str], int]) -> Callable[[str, str], List[int]]:
    """A space-separated list, each value read by parse."""
    return lambda value, name: [parse(one, name) for one in value.split()]


def _listed(what: str, known) -> Callable[[str, str], List[str]]:
    """Names from a catalogue list, in the order given, each once."""
    return lambda value, name: catalogue.parse_choices(value, name, what, known)


def _url(value: str, name: str) -> str:
    """An http(s) URL, or empty."""
    value = value.strip().rstrip("/")
    if value and not re.match(r"^https?://[^/\s]+(/\S*)?$", value):
        raise SettingsError("%s must be an http:// or https:// URL such as http://host-a:8080, got %r" % (name, value))
    return value


def _baseline(value: str, name: str) -> str:
    """A results folder that holds a results.json, as an absolute path; empty for none."""
    if not value:
        return ""
    folder = os.path.abspath(value)
    if not os.path.isfile(os.path.join(folder, "results.json")):
        raise SettingsError("%s=%s holds no results.json: name the folder of an earlier lab run" % (name, value))
    return folder


def _mix(value: str, name: str) -> List[str]:
    """The paths MIX loads at the same time: none, or at least two known ones, each once."""
    if not value.strip():
        return []
    chosen = catalogue.parse_choices(value, name, "path", tuple(catalogue.ALL))
    if len(chosen) < 2:
        raise SettingsError(
            "MIX loads paths at the same time, so it needs at least two, got %r; known paths: %s"
            % (value.strip(), " ".join(catalogue.ALL))
        )
    return chosen


KNOBS = (
    Knob(
        "REQUESTS",
        "",
        "requests",
        lambda value, name: _positive(value, name) if value else None,
        "`LOAD=closed`: requests of each measured `ab` run (`ab -n`), e.g. `1000`, the article's; empty: `ab` runs of "
        "whole rounds of `CONCURRENCY`, one after another, until `DURATION` is filled to within half a round (the "
        "first for 90 % of it at the path's latest pace, the next for half of what is left), read as one run, so "
        "that every path is measured for as long",
        recorded=True,
        default_text="(empty)",
    ),
    Knob(
        "CONCURRENCY",
        "100",
        "concurrency",
        _each(_positive),
        "concurrent `ab` clients (`ab -c`); a space-separated list sweeps",
        recorded=True,
    ),
    Knob(
        "N",
        "1000",
        "n",
        _each(_non_negative),
        "squares per request, i.e. calls (or stream messages) the aggregator makes per request; a space-separated "
        "list sweeps",
        recorded=True,
    ),
    Knob(
        "PATHS",
        catalogue.DEFAULT,
        "paths",
        lambda value, name: [path.name for path in catalogue.parse(value)],
        "the paths to measure, in this order: REST over HTTP/1.1 and over HTTP/2, then gRPC unary, a stream one "
        "message at a time, a stream pipelined; also `rest/square`, a baseline: one REST call straight to "
        "square-rest-service",
        recorded=True,
    ),
    Knob(
        "PAYLOAD",
        catalogue.SMALL,
        "payload",
        lambda value, name: catalogue.parse_payloads(value),
        "the payload shapes each call carries: `small` (the article's call, no payload), `wide`, `deep`, "
        "`collection`; a space-separated list measures every path with each",
        recorded=True,
        see="Payload shapes",
    ),
    Knob(
        "NETWORK",
        catalogue.LOOPBACK,
        "network",
        _listed("network", catalogue.NETWORKS),
        "the networks between the aggregator and the square services: `loopback` (direct), `proxy` (through "
        "Toxiproxy, no toxics), `hosts` (the square services on a host of their own: a network namespace joined by a "
        "veth pair; needs root), `lan` (0.5 ms round trip, 1 Gbit/s), `wan` (20 ms, 100 Mbit/s); a list measures "
        "everything on each in turn, the aggregator restarted for each; `proxy`, `lan` and `wan` need Go",
        recorded=True,
        see="Networks",
    ),
    Knob(
        "REST_SERVER",
        "netty",
        "rest_server",
        _listed("server", catalogue.REST_SERVERS),
        "the Spring servers square-rest-service runs on (its `square.server`): `netty` (Spring WebFlux on Reactor "
        "Netty, its default), `tomcat` and `jetty` (Spring MVC); a list measures every path on the first and the "
        "REST paths on each of the others, the services started anew for each",
        recorded=True,
        see="Stacks",
    ),
    Knob(
        "REST_CLIENT",
        "reactor-netty",
        "rest_client",
        _listed("client", catalogue.REST_CLIENTS),
        "the aggregator's REST connectors (its `aggregator.rest.client` and `aggregator.rest.h2c-client`): "
        "`reactor-netty` (Reactor Netty's client, used directly), `webclient` (Spring's WebClient over Reactor "
        "Netty), `jetty`, `apache` (WebClient over Jetty's or Apache HttpClient 5's), `jdk` (WebClient over the "
        "JDK's client: HTTP/1.1 only, so no rest/h2c); a list measures the aggregator's REST paths with each in turn",
        recorded=True,
        see="Stacks",
    ),
    Knob(
        "SPRING",
        catalogue.DEFAULT_SPRING,
        "spring",
        _listed("Spring generation", catalogue.SPRING_GENERATIONS),
        "the Spring generation the services are built on: `3.5` (Spring Boot 3.5 with net.devh's gRPC starter, what "
        "`mvn spring-boot:run` and `java -jar` start) or `4.1` (Spring Boot 4.1 with its own gRPC starters, the "
        "modules under `boot4/`); a list measures every path on each, the services started anew for each",
        recorded=True,
        see="Stacks",
    ),
    Knob(
        "JAVA_HOMES",
        "",
        "java_homes",
        lambda value, name: list(dict.fromkeys(value.split())),
        "installed JDKs (their folders, e.g. `/usr/lib/jvm/temurin-25-jdk-amd64`) to run every service on, one "
        "after the other, each measuring every path; one that is not a JDK stops the lab before it starts "
        "anything; empty: the lab's own `java` (`JAVA_HOME`, else the `java` on `PATH`)",
        recorded=True,
        default_text="the lab's own `java`",
    ),
    Knob(
        "VIRTUAL_THREADS",
        "off",
        "virtual_threads",
        lambda value, name: _choice("off", "on")(value, name) == "on",
        "`on`: the services' request threads are virtual (`spring.threads.virtual.enabled`: Tomcat and Jetty; JDK "
        "21 or newer, checked before anything starts)",
        recorded=True,
    ),
    Knob(
        "TLS",
        "off",
        "tls",
        _listed("TLS mode", catalogue.TLS_MODES),
        "the encryption between the aggregator and the square services: `off` (plaintext), `on` (TLS), `mtls` "
        "(mutual TLS); a list measures the aggregator's paths in each mode, the services started anew with a "
        "certificate authority the lab makes for the run and deletes after it; the load generator always reaches "
        "the aggregator in plaintext; needs openssl",
        recorded=True,
        see="TLS",
    ),
    Knob(
        "TLS_PROVIDER",
        "openssl",
        "tls_provider",
        _choice("openssl", "jdk"),
        "under `TLS`: what encrypts where Netty does (the gRPC square service, the aggregator's Reactor Netty and gRPC "
        "clients, the REST square service on Netty): `openssl`, BoringSSL through netty-tcnative, which the services "
        "carry and Netty prefers; `jdk`, the JDK's SSLEngine (Netty's `io.netty.handler.ssl.noOpenSsl`); Tomcat, "
        "Jetty and the Jetty, Apache and JDK clients have the JDK's only",
        recorded=True,
        see="TLS",
    ),
    Knob(
        "REPEATS",
        "3",
        "repeats",
        _positive,
        "times each combination is measured, interleaved: round 1 runs every combination once, then round 2, "
        "so that the machine's drift hits every path alike; a run reports the median of its repeats, each repeat, "
        "and the spread",
        recorded=True,
        see="Repeats and spread",
    ),
    Knob(
        "LOAD",
        "closed",
        "load",
        _choice("closed", "open", "knee"),
        "`closed`: `ab`, `CONCURRENCY` clients that each wait for their answer (the article's way); `open`: Vegeta "
        "sends `RATE` requests a second on a fixed schedule whatever the answers, latency from each request's "
        "intended send time; `knee`: the open loop at rates it searches from `RATE` for each path's highest within "
        "`SLO`",
        recorded=True,
        see="Open loop and the rate sweep",
    ),
    Knob(
        "SLO",
        "p99<=1s",
        "slo",
        lambda value, name: knee.parse_slo(value, name).text,
        "`LOAD=knee`: the latency each path must keep, from each request's intended send time, with every request "
        "answered right, e.g. `p99<=1s` or `p90<=250ms`",
        see="The highest rate within an SLO",
    ),
    Knob(
        "RATE",
        "50",
        "rate",
        _each(_positive),
        # Recorded by as_dict with LOAD=open only.
        '`LOAD=open`: requests per second; a space-separated list sweeps (`RATE="50 100 200 400"`)',
    ),
    Knob(
        "DURATION",
        "20",
        "duration_s",
        _seconds,
        "seconds each measured run lasts: Vegeta's attack (`LOAD=open`), or the `ab` runs of whole rounds that fill "
        "it (unless `REQUESTS` is set: `ab -t` would cut the last round of a slow path in the middle), in parts of "
        "about 5 s (up to 4) that take turns with the other repeats' and paths' parts, so that a slower minute of "
        "the machine hits every repeat alike; with "
        "`LOAD=open`, `120` or more makes each run a soak: each run also reports per minute each service's RSS and "
        "heap after a full GC and the path's p99",
        recorded=True,
        see="Soak",
    ),
    Knob(
        "MIX",
        "",
        "mix",
        _mix,
        'paths to load at the same time after the measurements, e.g. `"grpc/unary grpc/stream"` (each also in '
        "`PATHS`): on the first stack and network, at each `N`, each with `CONCURRENCY` clients for as long as the "
        "slowest took alone (`LOAD=open`: at `RATE` for `DURATION`); reports each path's goodput, p99 and non-200 "
        "answers by status beside its figures alone; empty: no mix",
        recorded=True,
        see="Mixed traffic",
    ),
    Knob(
        "WARMUP_SECONDS",
        "10",
        "warmup_s",
        _seconds_or_zero,
        "seconds of load at the measured concurrency (or rate) before a combination's first repeat, discarded; a "
        "closed loop goes on, up to twice as long, while a service of the path spends over 5 % of its time in "
        "the JIT compiler (`0`: none)",
        recorded=True,
    ),
    Knob(
        "AB_TIMEOUT",
        "120",
        "ab_timeout_s",
        _positive,
        "seconds `ab` waits for a response (`ab -s`); the aggregator's deadline is set to it as well (a slow network "
        "adds to both)",
        recorded=True,
        see="Networks",
    ),
    Knob(
        "RESULTS_DIR",
        "",
        "results_dir",
        lambda value, name: value or None,
        "where the results go (git-ignored)",
        default_text="`loadtest/results/<timestamp>`",
    ),
    Knob(
        "JAVA_OPTS",
        service_jvm_options(),
        "java_opts",
        lambda value, name: value,
        "JVM options of every service and of the floor. The default is what `spring-boot:run`, `java @jvm.options "
        "-jar`, the image, compose and the manifests start the services with (a fixed 128 MiB heap, the serial "
        "collector, and `-XX:+ExitOnOutOfMemoryError`: a service that runs out of memory exits rather than staying "
        "up deaf); set, even empty (JVM defaults), it replaces them",
        recorded=True,
        default_text="the options in the repository's [`jvm.options`](../jvm.options)",
        set_empty=True,
    ),
    Knob(
        "AGGREGATOR_ARGS",
        "",
        "aggregator_args",
        lambda value, name: value,
        "extra Spring arguments for the aggregator, e.g. `--aggregator.in-flight=1` (the article's sequential "
        "loop); the lab sets `--aggregator.deadline=<AB_TIMEOUT>s` unless this sets it",
        recorded=True,
    ),
    Knob("AGGREGATOR_PORT", "8080", "aggregator_port", _port, "the aggregator's port on 127.0.0.1"),
    Knob("SQUARE_REST_PORT", "7575", "square_rest_port", _port, "the REST square service's port (replica r: + r - 1)"),
    Knob(
        "SQUARE_REST_TLS_PORT",
        "7443",
        "square_rest_tls_port",
        _port,
        "under `TLS`: the REST square service's TLS port (replica r: + r - 1); its actuator stays in plaintext on "
        "`SQUARE_REST_PORT`",
    ),
    Knob(
        "SQUARE_GRPC_PORT", "6565", "square_grpc_port", _port, "the gRPC square service's port (replica r: + 2 (r - 1))"
    ),
    Knob(
        "SQUARE_GRPC_ACTUATOR_PORT",
        "6566",
        "square_grpc_actuator_port",
        _port,
        "the gRPC square service's actuator port (replica r: + 2 (r - 1))",
    ),
    Knob(
        "TOXIPROXY_PORT",
        "8474",
        "toxiproxy_port",
        _port,
        "a `NETWORK` other than loopback: Toxiproxy's API port on 127.0.0.1",
    ),
    Knob(
        "PROXY_PORT",
        "7700",
        "proxy_port",
        _port,
        "a `NETWORK` other than loopback: the first proxy's port; one proxy per square-service replica (REST "
        "replicas, then gRPC's) on consecutive ports from it",
    ),
    Knob(
        "REPLICAS",
        "1",
        "replicas",
        _replicas,
        "replicas of each square service (at most %d); the aggregator spreads its calls over all of them"
        % MAX_REPLICAS,
        recorded=True,
    ),
    Knob("HEALTH_TIMEOUT", "180", "health_timeout_s", _positive, "seconds to wait for the services to become healthy"),
    Knob(
        "LAB_SKIP_BUILD",
        "0",
        "skip_build",
        _switch,
        "`1`: never run Maven (the Maven build sets it, as it has just packaged the jars)",
    ),
    Knob(
        "PROMETHEUS",
        "0",
        "prometheus",
        _switch,
        "`1`: also run a real Prometheus beside the lab (`monitoring/run-prometheus.sh`, Debian's `prometheus`), "
        "scraping the services on the lab's ports every 5 s, to browse their metrics live while the lab runs; the "
        "lab prints its URL and an example query, and stops it at the end (also on failure or Ctrl-C)",
    ),
    Knob("PROMETHEUS_PORT", "9090", "prometheus_port", _port, "its port, on 127.0.0.1"),
    Knob(
        "FLOOR",
        "1",
        "floor",
        _switch,
        "`1`: after the paths, with the services stopped, run the bare transports (transport-floor) with the "
        "aggregator's window and `JAVA_OPTS`, `REPEATS` times interleaved; the report shows each path's fraction of "
        "its floor; `0`: skip it. An open loop has no fixed window, so `LOAD=open` runs no floor",
        recorded=True,
        see="The transport floor",
    ),
    Knob(
        "FLOOR_WARMUP",
        "10",
        "floor_warmup_s",
        _seconds_or_zero,
        "seconds of each floor window's load before its first repeat, discarded; it goes on, up to twice as long, "
        "while the floor's client or server JVM spends over 5 % of its time in the JIT compiler, as the paths' "
        "warm-up does",
        recorded=True,
    ),
    Knob(
        "FLOOR_DURATION",
        "10",
        "floor_duration_s",
        _seconds,
        "seconds each repeat of a floor window measures (a decimal number, e.g. `2` or `0.5`), in as many parts as "
        "a path's repeat, which take turns with the other windows' on the same JVMs",
        recorded=True,
    ),
    Knob(
        "CPUS",
        "shared",
        "cpus",
        _choice(*catalogue.PLACEMENTS),
        "`shared`: every process on every CPU; `split` (4 CPUs or more): the load generator on a quarter of them, "
        "the services on the rest, so that neither takes the other's cycles; results.json records where each ran",
        recorded=True,
    ),
    Knob(
        "TARGET",
        "",
        "target",
        _url,
        "the aggregator's URL of services you started, e.g. `http://host-a:8080`: the lab starts none, finds the "
        "square services from the aggregator's `/actuator/info`, checks every path's answer, and reads each "
        "service's CPU time and resident memory from the service itself over each measured window; empty: the lab "
        "starts its own",
        recorded=True,
        see="Measuring services you run",
    ),
    Knob(
        "TARGET_ACTUATORS",
        "",
        "target_actuators",
        lambda value, name: value.strip(),
        "with `TARGET`: the actuators the lab cannot find from the aggregator's `/actuator/info`, e.g. "
        "`square-grpc-service=http://host-b:6566/actuator` (comma-separated; each replica of a service listed)",
        recorded=True,
    ),
    Knob(
        "TARGET_PROMETHEUS",
        "",
        "target_prometheus",
        _url,
        "with `TARGET`: a Prometheus that scrapes the services (a cluster's), e.g. `http://prometheus:9090`: CPU and "
        "resident memory come from it, each pod's scrapes just before and just after each window, a service's pods "
        "added up",
        recorded=True,
    ),
    Knob(
        "EXPECT",
        "",
        "expect",
        lambda value, name: [gate.text for gate in gates.parse(value, name)],
        "gates the run must meet, separated by `;`, each judged per stack and condition against the medians, e.g. "
        "`grpc/unary.rps >= 2 * rest/unary.rps; grpc/stream.p99 <= 500ms; *.failed == 0`; a missed gate makes the "
        "run exit with status %d. Figures: %s" % (gates.GATES_FAILED, gates.usage()),
        recorded=True,
        see="Gates",
        default_text="(none)",
    ),
    Knob(
        "BASELINE",
        "",
        "baseline",
        _baseline,
        "a results folder of an earlier run to compare this one with at its end, path by path (`comparison.md`, as "
        "`--compare` writes it); a gate may then name it, e.g. `grpc/unary.rps >= 0.95 * baseline`",
        recorded=True,
        see="Comparing two runs",
        default_text="(none)",
    ),
)


@dataclass
class Settings:
    """The knobs, read: one field per row of KNOBS (Knob.field), in the order results.json records them."""

    # None: as many as fill duration_s (lab.measure.bench.requests_for).
    requests: Optional[int]
    concurrency: List[int]
    n: List[int]
    paths: List[str]
    warmup_s: float
    ab_timeout_s: int
    repeats: int
    payload: List[str]
    network: List[str]
    rest_server: List[str]
    rest_client: List[str]
    mix: List[str]
    java_homes: List[str]
    spring: List[str]
    virtual_threads: bool
    load: str
    slo: str
    rate: List[int]
    duration_s: float
    floor: bool
    floor_warmup_s: float
    floor_duration_s: float
    replicas: int
    java_opts: str
    aggregator_args: str
    cpus: str
    # The last knob results.json records: it records them in this order, and TLS came after the others.
    tls: List[str]
    tls_provider: str
    target: str
    target_actuators: str
    target_prometheus: str
    aggregator_port: int
    square_rest_port: int
    square_rest_tls_port: int
    square_grpc_port: int
    square_grpc_actuator_port: int
    toxiproxy_port: int
    proxy_port: int
    health_timeout_s: int
    skip_build: bool
    prometheus: bool
    prometheus_port: int
    results_dir: Optional[str]
    # Gate texts (lab.core.gates), as EXPECT gave them.
    expect: List[str]
    # An earlier run's results folder, absolute; empty without one.
    baseline: str

    @classmethod
    def from_env(cls, env: Mapping[str, str] = os.environ) -> "Settings":
        settings = cls(**{knob.field: _read(knob, env) for knob in KNOBS})
        settings._check_combinations()
        return settings

    @property
    def open_loop(self) -> bool:
        """Vegeta's open loop: LOAD=open, and the knee search, which runs it at the rates it chooses."""
        return self.load in ("open", "knee")

    @property
    def knee(self) -> bool:
        return self.load == "knee"

    @property
    def parts(self) -> int:
        """The parts each repeat of a closed loop by time is measured in, of about PART_S each, up to MAX_PARTS
        (lab.core.repeats.interleaved): 1 for a count of requests (REQUESTS) or an open loop."""
        if self.open_loop or self.requests or self.target_prometheus:
            # Prometheus samples every few seconds: a window of one part would lie between two of its scrapes.
            return 1
        return max(1, min(MAX_PARTS, int(self.duration_s // PART_S)))

    @property
    def floor_parts(self) -> int:
        """The parts each floor repeat is measured in: as many as the paths' (lab.measure.floor.measure), at least
        one."""
        return max(1, min(MAX_PARTS, int(self.duration_s // PART_S))) if not self.open_loop else 1

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
        recorded = {knob.field for knob in KNOBS if knob.recorded}
        found = {key: value for key, value in asdict(self).items() if key in recorded}
        found["parts"] = self.parts
        if self.open_loop:
            # An open loop has no fixed number of requests or clients: a rate and a duration instead.
            found.update(rate=self.rate, duration_s=self.duration_s, requests=None, concurrency=[])
        if self.knee:
            # Recorded as the open loop it is, at the rates the search chose (lab.core.knee), and the search's terms.
            found.update(load="open", knee={"slo": self.slo, "start_rate": self.rate[0], "max_steps": knee.MAX_STEPS})
        return found

    def _check_combinations(self) -> None:
        _check_target(self)
        if len(set(self.rate)) != len(self.rate):
            raise SettingsError("RATE must not repeat a value")
        if self.knee and len(self.rate) > 1:
            raise SettingsError(
                "LOAD=knee searches each path's rate from one RATE, got %s: give the rate to start at, e.g. RATE=50"
                % " ".join(map(str, self.rate))
            )
        if self.knee and self.mix:
            raise SettingsError("MIX loads paths together at one load, which LOAD=knee searches path by path: set one")
        if self.knee:
            # Each rate of the search is measured once: the search, not repeats, narrows the answer.
            self.repeats = 1
        if self.open_loop and self.floor:
            # The floor keeps the aggregator's window of a closed loop in flight; an open loop has no fixed one.
            self.floor = False
        if catalogue.SMALL not in self.payload or catalogue.LOOPBACK not in self.network:
            # The bare transports carry the article's small call on loopback: nothing else has a floor to compare with.
            self.floor = False
        if "rest/square" in self.paths and self.payload != [catalogue.SMALL]:
            raise SettingsError(
                "rest/square is a baseline straight to square-rest-service and carries no payload "
                "shape: measure it with PAYLOAD=small, or the shapes without it"
            )
        if "rest/square" in self.paths and self.network != [catalogue.LOOPBACK]:
            raise SettingsError(
                "rest/square does not go through the aggregator, so NETWORK does not reach it: "
                "measure it with NETWORK=loopback, or the networks without it"
            )
        if len(self.tls) > 1 and self.tls[0] != catalogue.PLAINTEXT:
            raise SettingsError(
                'TLS compares each mode with plaintext, so a list starts with off: TLS="off %s"'
                % " ".join(mode for mode in self.tls if mode != catalogue.PLAINTEXT)
            )
        if self.tls[0] != catalogue.PLAINTEXT and "rest/square" in self.paths:
            raise SettingsError(
                "rest/square is ab straight to square-rest-service, which the lab loads in plaintext only: put off "
                'first in TLS (TLS="off %s"), or measure the paths without rest/square' % " ".join(self.tls)
            )
        gates.check_measured(gates.parse("; ".join(self.expect)), self.paths, bool(self.baseline))
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
                % (" ".join(map(str, too_many)), self.requests or 0)
            )
        if len(set(self.concurrency)) != len(self.concurrency) or len(set(self.n)) != len(self.n):
            raise SettingsError("CONCURRENCY and N must not repeat a value")
        for name in self.paths:
            if catalogue.ALL[name].target != catalogue.AGGREGATOR:
                too_big = [n for n in self.n if n > 2**31 - 1]
                if too_big:
                    raise SettingsError("N %s is not a 32-bit number for path %s" % (too_big, name))


# What the lab chooses of the services it starts (and NETWORK, of the network between them): with TARGET it measures
# them as they run, so these must keep their defaults.
STARTING_KNOBS = (
    "REST_SERVER",
    "REST_CLIENT",
    "SPRING",
    "JAVA_HOMES",
    "VIRTUAL_THREADS",
    "TLS",
    "REPLICAS",
    "NETWORK",
    "JAVA_OPTS",
    "AGGREGATOR_ARGS",
)


def _check_target(settings: "Settings") -> None:
    if not settings.target:
        for name, value in (
            ("TARGET_ACTUATORS", settings.target_actuators),
            ("TARGET_PROMETHEUS", settings.target_prometheus),
        ):
            if value:
                raise SettingsError("%s is for TARGET: give the aggregator's URL in TARGET too" % name)
        return
    by_name = {knob.name: knob for knob in KNOBS}
    chosen = [
        name
        for name in STARTING_KNOBS
        if getattr(settings, by_name[name].field) != by_name[name].parse(by_name[name].default, name)
    ]
    if chosen:
        raise SettingsError(
            "%s %s how the lab starts its own services (and NETWORK simulates a network between them); with TARGET "
            "it starts none and measures yours as they run, over the network between your hosts: unset %s"
            % (" and ".join(chosen), "chooses" if len(chosen) == 1 else "choose", " and ".join(chosen))
        )
    if settings.prometheus:
        raise SettingsError(
            "PROMETHEUS=1 runs a Prometheus on the lab's own ports; with TARGET give the one that scrapes your "
            "services as TARGET_PROMETHEUS"
        )
    if soak_wanted(settings):
        raise SettingsError(
            "a soak (LOAD=open, DURATION of 120 s or more) reads the services' heap with jcmd on this machine, "
            "which services elsewhere are not: measure TARGET with a shorter DURATION"
        )
    # The floor is this machine's bare transports; the services run elsewhere.
    settings.floor = False


def soak_wanted(settings: "Settings") -> bool:
    """Whether each measured run is a soak (lab.soak): an open loop of at least SOAK_MIN_S."""
    return settings.load == "open" and settings.duration_s >= SOAK_MIN_S


# The shortest open loop that is a soak (lab.measure.soak reads it from here).
SOAK_MIN_S = 120.0


def _read(knob: Knob, env: Mapping[str, str]) -> Any:
    """A knob's value from the environment, its default when unset or blank, read by the knob's parser."""
    if knob.set_empty and knob.name in env:
        value = env[knob.name]
    else:
        value = env.get(knob.name, "").strip() or knob.default
    try:
        return knob.parse(value, knob.name)
    except SettingsError:
        raise
    except ValueError as error:
        # The catalogue's parsers name the knob and the known values themselves.
        raise SettingsError(str(error)) from None


def usage() -> str:
    """The knobs, as `loadtest/run.sh --help` lists them."""
    lines = ["Knobs are environment variables (defaults replicate the article's `ab -n 1000 -c 100`):"]
    for knob in KNOBS:
        text = knob.meaning + (" (loadtest/README.md: %s)" % knob.see if knob.see else "")
        text += "  [%s]" % knob.default if knob.default else ""
        lines.append(
            textwrap.fill(
                text, 118, initial_indent="  %-26s " % knob.name, subsequent_indent=" " * 29, break_on_hyphens=False
            )
        )
    return "\n".join(lines)


def markdown() -> str:
    """The knobs as loadtest/README.md's table (`python3 -m lab knobs --markdown`)."""
    lines = ["| variable | default | what it sets |", "| --- | --- | --- |"]
    for knob in KNOBS:
        default = knob.default_text or ("`%s`" % knob.default if knob.default else "")
        see = " ([%s](#%s))" % (knob.see, knob.see.lower().replace(" ", "-")) if knob.see else ""
        lines.append("| `%s` | %s | %s%s |" % (knob.name, default, knob.meaning, see))
    return "\n".join(lines)
