"""The lab's facts, as data that imports nothing of the lab: the paths it can measure (where ab sends its load, what
a correct answer is, who does the work), the payload shapes, the REST servers and clients, and the networks between
the aggregator and the square services."""

import math
from dataclasses import dataclass
from typing import Dict, Iterable, List, Optional

AGGREGATOR = "aggregator-service"
SQUARE_REST = "square-rest-service"
SQUARE_GRPC = "square-grpc-service"

# The payload shapes a call can carry (PAYLOAD), the aggregator's ?payload=: small is the article's call, no payload;
# wide a tree of 61 objects, deep 8 nested ones, collection a list of 100. The aggregator answers the same squares
# whatever the shape: it checks every echo itself.
SMALL = "small"
PAYLOADS = (SMALL, "wide", "deep", "collection")

# The Spring servers square-rest-service runs on (its square.server, REST_SERVER): Spring WebFlux on Reactor Netty (its
# default), Spring MVC on Tomcat or Jetty 12.
REST_SERVERS = ("netty", "tomcat", "jetty")
# The aggregator's REST connectors (its aggregator.rest.client and rest.h2c-client, REST_CLIENT): Reactor Netty's client
# used directly (the default), Spring's WebClient over Reactor Netty, Jetty, Apache HttpClient 5 or the JDK's client.
# The JDK's client has no HTTP/2 cleartext with prior knowledge, so it carries rest/unary only.
REST_CLIENTS = ("reactor-netty", "webclient", "jetty", "apache", "jdk")
HTTP1_ONLY_CLIENTS = ("jdk",)
# The encryption between the aggregator and the square services (TLS): none, TLS, or mutual TLS; how labels name each.
PLAINTEXT = "off"
TLS_MODES = (PLAINTEXT, "on", "mtls")
TLS_NAMES = {PLAINTEXT: "plaintext", "on": "TLS", "mtls": "mTLS"}


@dataclass(frozen=True)
class Path:
    name: str
    # The service ab calls, and the URL path it asks for, with {n} in it.
    target: str
    url_path: str
    # The service that answers the squares, or None when the target answers by itself.
    downstream: Optional[str]
    description: str
    # The contract's name of the path's transport (the aggregator's metric tag, and the floor's transport that
    # carries the same calls bare), or None for a path without the aggregator.
    transport: Optional[str] = None
    # How its n calls wait on the network: "windows" of in-flight calls (unary), "one at a time" on one stream
    # (ping-pong), or "pipelined" on one stream; empty without the aggregator.
    calls: str = ""

    def url(self, base_urls: Dict[str, str], n: int, payload: str = SMALL) -> str:
        """The URL ab asks for; a payload shape other than small as ?payload=, so that the article's URLs stay."""
        query = "" if payload == SMALL else "?payload=" + payload
        return base_urls[self.target] + self.url_path.format(n=n) + query

    def expected_body(self, n: int) -> str:
        if self.target == AGGREGATOR:
            # The aggregator's contract: [{"1":1},{"2":4},...] with no whitespace, in order.
            return "[" + ",".join('{"%d":%d}' % (i, i * i) for i in range(1, n + 1)) + "]"
        return str(n * n)

    def calls_per_request(self, n: int) -> int:
        """How many square calls (or stream messages) one request costs downstream."""
        return n if self.target == AGGREGATOR else 1

    def round_trips(self, n: int, in_flight: int) -> int:
        """The round trips one request of n calls waits for, one after the other, at least."""
        if n < 1 or not self.calls:
            return 0
        if self.calls == "windows":
            return math.ceil(n / in_flight)
        return n if self.calls == "one at a time" else 1

    @property
    def services(self) -> List[str]:
        return [self.target] if self.downstream is None else [self.target, self.downstream]


ALL = {
    path.name: path
    for path in (
        Path(
            "rest/unary",
            AGGREGATOR,
            "/rest/unary/{n}",
            SQUARE_REST,
            "aggregator -> square-rest-service: n REST calls",
            "rest_unary",
            "windows",
        ),
        Path(
            "rest/h2c",
            AGGREGATOR,
            "/rest/h2c/{n}",
            SQUARE_REST,
            "aggregator -> square-rest-service: n REST calls over HTTP/2 cleartext, multiplexed",
            "rest_h2c",
            "windows",
        ),
        Path(
            "grpc/unary",
            AGGREGATOR,
            "/grpc/unary/{n}",
            SQUARE_GRPC,
            "aggregator -> square-grpc-service: n gRPC unary calls",
            "grpc_unary",
            "windows",
        ),
        Path(
            "grpc/pingpong",
            AGGREGATOR,
            "/grpc/pingpong/{n}",
            SQUARE_GRPC,
            "aggregator -> square-grpc-service: n messages on one bidi stream, one at a time",
            "grpc_pingpong",
            "one at a time",
        ),
        Path(
            "grpc/stream",
            AGGREGATOR,
            "/grpc/stream/{n}",
            SQUARE_GRPC,
            "aggregator -> square-grpc-service: n messages on one bidi stream, pipelined",
            "grpc_stream",
            "pipelined",
        ),
        # A baseline beside the article's three: one REST call straight to the square service, no aggregator
        # (n is then the number squared). It needs only square-rest-service, and has no transport of the
        # aggregator's, so no floor.
        Path(
            "rest/square",
            SQUARE_REST,
            "/rest/square/unary/{n}",
            None,
            "ab -> square-rest-service directly: one REST call per request (baseline)",
        ),
    )
}

# Grouped so that the comparisons read at a glance: REST over HTTP/1.1 and HTTP/2, then gRPC unary, ping-pong
# and pipelined stream.
DEFAULT = "rest/unary rest/h2c grpc/unary grpc/pingpong grpc/stream"

# The comparisons a user chooses between (the report's side by side, and its verdict): the protocol (HTTP/1.1 or
# HTTP/2 under REST; REST or gRPC), and how the calls use it (one call each, one stream one message at a time, one
# stream pipelined).
COMPARISONS = (
    ("rest/h2c", "rest/unary", "REST: HTTP/2 multiplexed against HTTP/1.1"),
    ("grpc/unary", "rest/unary", "gRPC unary against REST over HTTP/1.1"),
    ("grpc/unary", "rest/h2c", "gRPC unary against REST over HTTP/2: the framing, on the same protocol"),
    ("grpc/pingpong", "grpc/unary", "gRPC: one stream, one message at a time, against unary calls"),
    ("grpc/stream", "grpc/pingpong", "gRPC: one stream pipelined against one message at a time"),
)


def parse(names: str) -> List[Path]:
    """The paths named in a space-separated list such as PATHS, in the order given."""
    return [ALL[name] for name in parse_choices(names, "PATHS", "path", tuple(ALL))]


def parse_payloads(names: str) -> List[str]:
    """The payload shapes named in a space-separated list such as PAYLOAD, in the order given."""
    chosen = []
    for name in names.split():
        if name not in PAYLOADS:
            raise ValueError("unknown payload shape %r in PAYLOAD; known shapes: %s" % (name, " ".join(PAYLOADS)))
        if name not in chosen:
            chosen.append(name)
    if not chosen:
        raise ValueError("PAYLOAD names no shape; known shapes: %s" % " ".join(PAYLOADS))
    return chosen


def parse_choices(names: str, knob: str, what: str, known) -> List[str]:
    """The values named in a space-separated list such as REST_SERVER, in the order given, each once."""
    chosen = []
    for name in names.split():
        if name not in known:
            raise ValueError("unknown %s %r in %s; known %ss: %s" % (what, name, knob, what, " ".join(known)))
        if name not in chosen:
            chosen.append(name)
    if not chosen:
        raise ValueError("%s names no %s; known %ss: %s" % (knob, what, what, " ".join(known)))
    return chosen


def services_needed(paths: Iterable[Path]) -> List[str]:
    """Every service the paths involve, in start-up order (downstreams before the aggregator)."""
    needed = {service for path in paths for service in path.services}
    return [service for service in (SQUARE_REST, SQUARE_GRPC, AGGREGATOR) if service in needed]


# The networks (NETWORK): Toxiproxy's toxics between the aggregator and each square service (lab.stage.network
# applies them).

# The network every run crossed before NETWORK, and the default: no proxy.
LOOPBACK = "loopback"
# Toxiproxy's bandwidth toxic counts KB/s of 1000 bytes: 1 Mbit/s is 125 of them.
KB_PER_S_PER_MBIT = 125
DIRECTIONS = ("upstream", "downstream")


@dataclass(frozen=True)
class Profile:
    """A network between the aggregator and the square services."""

    name: str
    proxied: bool
    rtt_ms: float
    rate_mbit_s: Optional[int]
    description: str
    # The square services on a host of their own (lab.hosts): a network namespace joined by a veth pair.
    apart: bool = False

    @property
    def one_way_us(self) -> int:
        """Each direction's share of the round trip."""
        return round(self.rtt_ms * 1000 / 2)

    def toxics(self) -> List[Dict]:
        """Toxiproxy's toxics for this profile, on both directions: none for a bare proxy."""
        toxics = []
        for direction in DIRECTIONS:
            if self.one_way_us:
                toxics.append(
                    {
                        "name": "latency_" + direction,
                        "type": "latency_us",
                        "stream": direction,
                        "toxicity": 1.0,
                        "attributes": {"latency": self.one_way_us},
                    }
                )
            if self.rate_mbit_s:
                toxics.append(
                    {
                        "name": "bandwidth_" + direction,
                        "type": "bandwidth",
                        "stream": direction,
                        "toxicity": 1.0,
                        "attributes": {"rate": self.rate_mbit_s * KB_PER_S_PER_MBIT},
                    }
                )
        return toxics


PROFILES = {
    profile.name: profile
    for profile in (
        Profile(LOOPBACK, False, 0.0, None, "loopback, direct: no proxy"),
        Profile("proxy", True, 0.0, None, "loopback through Toxiproxy with no toxics: what the proxy itself costs"),
        Profile(
            "hosts",
            False,
            0.0,
            None,
            "two hosts: the square services in a network namespace of their own, joined by a veth pair (a real kernel "
            "network path, no proxy)",
            apart=True,
        ),
        Profile("lan", True, 0.5, 1000, "LAN: 0.5 ms round trip, 1 Gbit/s each way"),
        Profile("wan", True, 20.0, 100, "WAN: 20 ms round trip, 100 Mbit/s each way"),
    )
}
NETWORKS = tuple(PROFILES)


# Where the lab's children run (CPUS; lab.host.placement): every process on every CPU, or the load generator apart.
PLACEMENTS = ("shared", "split")

# The temporary folder of a run's throwaway certificates (lab.stage.tls): results.json never names it.
TLS_FOLDER_PREFIX = "lab-tls-"


def transport_of(path: str) -> str:
    """The transport a path's calls take: rest/h2c's h2, the other REST path's HTTP/1.1, or gRPC."""
    return "grpc" if path.startswith("grpc/") else "rest-h2c" if path == "rest/h2c" else "rest"


# Toxiproxy, between the aggregator and the square services on a NETWORK other than loopback, is a process of the run
# as the services are: its CPU is shown beside theirs, never in "other".
PROXY = "toxiproxy"


# The Spring generations the services are built on (SPRING): Spring Boot 3.5 with net.devh's gRPC starter, the default
# every other way of starting them uses, and Spring Boot 4.1 with its own gRPC starters, whose deployables are the
# modules under boot4/ (jars named <module>-boot4-<version>.jar).
SPRING_GENERATIONS = ("3.5", "4.1")
DEFAULT_SPRING = "3.5"
SPRING_WORDS = {"3.5": "Spring Boot 3.5 with net.devh's gRPC starter", "4.1": "Spring Boot 4.1 with Spring gRPC"}


def module_of(spring: str, module: str) -> str:
    """The Maven module of a service on a Spring generation: aggregator-service, or boot4/aggregator-service."""
    return module if spring == DEFAULT_SPRING else "boot4/" + module
