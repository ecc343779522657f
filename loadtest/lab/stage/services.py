"""The services the lab runs: which, on which loopback ports, and with which arguments.

Replica r of a square service listens on its port + (r - 1) (REST) or + 2 (r - 1) (gRPC and its actuator):
7575, 7576; 6565/6566, 6567/6568. The aggregator is pointed at every replica, directly, or on a NETWORK other than
loopback through a proxy of its own (Toxiproxy) for each, on PROXY_PORT, PROXY_PORT + 1, ...
"""

import dataclasses
from dataclasses import dataclass, field
from typing import Dict, List, Optional

from ..core.catalogue import AGGREGATOR, PLAINTEXT, SQUARE_GRPC, SQUARE_REST
from ..core.errors import LabError
from ..core.settings import Settings
from ..host.processes import Watched
from ..load import http_check
from . import target
from .deadlines import Deadlines

FLOOR = "transport-floor"
LOOPBACK_ADDRESS = "127.0.0.1"


@dataclass(frozen=True)
class Instance:
    """One process of a service: its module, replica number, and where it answers."""

    module: str
    replica: int
    # The ports it listens on, by the knob that sets them (a replica's named KNOB+offset).
    ports: Dict[str, int]
    arguments: List[str]
    # Its HTTP port: the actuator's (health, metrics, info), and the API's where it has one over HTTP.
    http_port: int
    serves_http_api: bool
    # The port its calls come to: the HTTP port, or the gRPC service's gRPC port.
    serving_port: int = 0
    # The address it listens on: loopback, or (NETWORK=hosts) its own namespace's end of the link.
    host: str = LOOPBACK_ADDRESS

    @property
    def name(self) -> str:
        return self.module if self.replica == 1 else "%s-%d" % (self.module, self.replica)

    @property
    def actuator(self) -> str:
        return "http://%s:%d/actuator" % (self.host, self.http_port)

    @property
    def base_url(self) -> Optional[str]:
        return "http://%s:%d" % (self.host, self.http_port) if self.serves_http_api else None


def layout(settings: Settings, modules: List[str]) -> List[Instance]:
    """Every process of the given modules, square services before the aggregator, which is pointed at all of
    their replicas directly (loopback)."""
    squares = [
        _square(settings, module, replica)
        for module in modules
        if module != AGGREGATOR
        for replica in range(1, settings.replicas + 1)
    ]
    if AGGREGATOR not in modules:
        return squares
    return squares + [aggregator(settings, squares)]


def aggregator(
    settings: Settings,
    squares: List[Instance],
    proxies: Optional[Dict[str, str]] = None,
    deadlines: Optional[Deadlines] = None,
    tls: str = PLAINTEXT,
) -> Instance:
    """The aggregator, pointed at every square-service replica: directly, or at the address of its proxy (by the
    replica's name, proxies[name] is "127.0.0.1:<port>"), with the deadlines of its network; its REST base URLs
    https under TLS (the arguments with its certificates are lab.stage.tls's)."""

    def address(instance: Instance) -> str:
        return proxies[instance.name] if proxies else "%s:%d" % (instance.host, instance.serving_port)

    scheme = "http://" if tls == PLAINTEXT else "https://"
    rest = [scheme + address(i) for i in squares if i.module == SQUARE_REST]
    grpc = [address(i) for i in squares if i.module == SQUARE_GRPC]
    port = settings.aggregator_port
    arguments = ["--server.address=127.0.0.1", "--server.port=%d" % port]
    arguments += ["--aggregator.rest.base-url=" + ",".join(rest)] if rest else []
    arguments += ["--aggregator.grpc.target=" + ",".join(grpc)] if grpc else []
    return Instance(
        AGGREGATOR,
        1,
        {"AGGREGATOR_PORT": port},
        arguments + aggregator_arguments(settings, deadlines),
        port,
        True,
        port,
    )


@dataclass(frozen=True)
class Route:
    """One proxy of Toxiproxy: named after the square-service replica it leads to, listening on its own port."""

    name: str
    module: str
    # The knob that sets its port (PROXY_PORT, PROXY_PORT+1, ...), its port, and the replica's address.
    knob: str
    listen_port: int
    upstream: str

    @property
    def upstream_port(self) -> int:
        return int(self.upstream.rsplit(":", 1)[1])


def proxy_routes(settings: Settings, squares: List[Instance]) -> List[Route]:
    """A proxy for every square-service replica, on consecutive ports from PROXY_PORT."""
    return [
        Route(
            instance.name,
            instance.module,
            _knob("PROXY_PORT", index),
            settings.proxy_port + index,
            "127.0.0.1:%d" % instance.serving_port,
        )
        for index, instance in enumerate(squares)
    ]


def on_tls(settings: Settings, instance: Instance, tls: str) -> Instance:
    """A square service as a TLS mode runs it: the REST square service serves its API over TLS on
    SQUARE_REST_TLS_PORT (+ replica - 1) and keeps its actuator in plaintext on its own port, where the lab reads
    health and metrics; the gRPC service serves TLS on its gRPC port (its actuator has its own port already)."""
    if tls == PLAINTEXT or instance.module != SQUARE_REST:
        return instance
    port = settings.square_rest_tls_port + instance.replica - 1
    return dataclasses.replace(
        instance,
        ports=dict(instance.ports, **{_knob("SQUARE_REST_TLS_PORT", instance.replica - 1): port}),
        arguments=[
            "--server.address=" + instance.host,
            "--server.port=%d" % port,
            "--management.server.address=" + instance.host,
            "--management.server.port=%d" % instance.http_port,
            "--management.server.ssl.enabled=false",
        ],
        # Its API is not on the actuator's port: ab does not reach it (rest/square is plaintext only).
        serves_http_api=False,
        serving_port=port,
    )


def on_host(settings: Settings, instance: Instance, address: str) -> Instance:
    """A square service listening on another address (NETWORK=hosts: its namespace's end of the link), on the same
    ports: each namespace has ports of its own."""
    return _square(settings, instance.module, instance.replica, address)


def _square(settings: Settings, module: str, replica: int, host: str = LOOPBACK_ADDRESS) -> Instance:
    listening = ["--server.address=" + host]
    if module == SQUARE_REST:
        port = settings.square_rest_port + replica - 1
        return Instance(
            module,
            replica,
            {_knob("SQUARE_REST_PORT", replica - 1): port},
            listening + ["--server.port=%d" % port],
            port,
            True,
            port,
            host,
        )
    if module == SQUARE_GRPC:
        offset = 2 * (replica - 1)
        grpc, actuator = settings.square_grpc_port + offset, settings.square_grpc_actuator_port + offset
        return Instance(
            module,
            replica,
            {_knob("SQUARE_GRPC_PORT", offset): grpc, _knob("SQUARE_GRPC_ACTUATOR_PORT", offset): actuator},
            listening
            + ["--server.port=%d" % actuator, "--grpc.server.address=" + host, "--grpc.server.port=%d" % grpc],
            actuator,
            False,
            grpc,
            host,
        )
    raise ValueError("not a square service: %s" % module)


def aggregator_arguments(settings: Settings, deadlines: Optional[Deadlines] = None) -> List[str]:
    """AGGREGATOR_ARGS, after the lab's own deadlines: the lab measures how long answers take, so the aggregator
    may take as long as ab waits (AB_TIMEOUT, or on a slow network what lab.stage.deadlines allows); its own 30 s would
    turn the slowest answers at the article's load on a small machine into 504s. A network's call deadline too, when
    it needs a longer one than the aggregator's 10 s. AGGREGATOR_ARGS can still set either itself."""
    given = settings.aggregator_args.split()
    own = []
    if not any("aggregator.deadline=" in argument for argument in given):
        own.append("--aggregator.deadline=%ds" % (deadlines.request_s if deadlines else settings.ab_timeout_s))
    if deadlines and deadlines.call_s and not any("aggregator.call-deadline=" in argument for argument in given):
        own.append("--aggregator.call-deadline=%ds" % deadlines.call_s)
    return own + given


def _knob(name: str, offset: int) -> str:
    return name if offset == 0 else "%s+%d" % (name, offset)


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
    # The network namespace it runs in (NETWORK=hosts: the square services'), None for the machine's.
    namespace: Optional[str] = None
    # How its CPU and memory are read (lab.target): from /proc on this machine, from its own /actuator/prometheus, or
    # from a Prometheus (TARGET_PROMETHEUS, this one); a service the lab did not start has no pids.
    read: str = target.PROC
    prometheus: Optional[target.Prometheus] = None


def check_ports(instances: List[Instance], settings: Settings) -> None:
    """Fails, naming them and the knob that moves them, when a port the lab needs is taken."""
    wanted = {knob: port for instance in instances for knob, port in instance.ports.items()}
    # A TLS mode moves the REST square service's API to its TLS port.
    wanted.update(
        item
        for mode in settings.tls
        for instance in instances
        for item in on_tls(settings, instance, mode).ports.items()
    )
    if settings.prometheus:
        wanted["PROMETHEUS_PORT"] = settings.prometheus_port
    if settings.proxied:
        wanted["TOXIPROXY_PORT"] = settings.toxiproxy_port
        squares = [instance for instance in instances if instance.module != AGGREGATOR]
        wanted.update((route.knob, route.listen_port) for route in proxy_routes(settings, squares))
    taken = {knob: port for knob, port in wanted.items() if http_check.port_taken(port)}
    if not taken:
        return
    lines = [
        "port %d (%s) is already in use on 127.0.0.1.%s" % (port, knob, http_check.holder(port))
        for knob, port in taken.items()
    ]
    # A replica's port is named KNOB+offset: the knob to move is KNOB itself.
    moved: Dict[str, int] = {}
    for knob, port in taken.items():
        base, _, offset = knob.partition("+")
        moved.setdefault(base, port - int(offset or 0) + 10000)
    lines.append(
        "Stop what holds it, or give the lab other ports, e.g. %s loadtest/run.sh"
        % " ".join("%s=%d" % item for item in moved.items())
    )
    raise LabError("\n[lab] ".join(lines))
