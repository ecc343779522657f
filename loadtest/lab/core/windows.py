"""The window the aggregator keeps in flight in each measured combination, and so what its transport's floor runs: the
bare transports of transport-floor/ (no Spring on the path) with the same window, on the same machine.

The window of a combination (path, n, concurrency, TLS mode) follows from the aggregator's `in-flight` and
`rest-max-connections`, which the lab reads from the running aggregator's /actuator/info and records in
results.json (settings.aggregator):

- grpc/unary -> grpc_unary: concurrency x min(n, in-flight) calls in flight on one channel. Each request keeps
  at most in-flight of its n calls in flight, and ab keeps `concurrency` requests at the aggregator.
- rest/unary -> rest_unary: as many keep-alive connections as there can be calls, up to the pools' size:
  min(rest-max-connections x rest-replicas, concurrency x min(n, in-flight)); one call on each.
- rest/h2c -> rest_h2c: the aggregator's HTTP/2 connections (rest-h2c-connections x rest-replicas), carrying
  concurrency x min(n, in-flight) calls in flight between them, at most rest-h2c-max-streams on each.
- grpc/stream -> grpc_stream: concurrency streams (one per request), n messages on each.
- grpc/pingpong -> grpc_pingpong: concurrency streams, n messages on each, one in flight on each.

n = 0 costs no downstream call, and the rest/square baseline has no aggregator: neither has a floor. Under TLS
(TLS="off on mtls"), each mode has its own floor: the same windows over TLS or mutual TLS.
"""

from dataclasses import asdict, dataclass
from typing import Dict, List, Optional, Tuple

from . import catalogue, records
from .errors import FloorError

GOAL = 0.6
SERVER_KIND = {
    "rest_unary": "http",
    "rest_h2c": "http",
    "grpc_unary": "grpc",
    "grpc_stream": "grpc",
    "grpc_pingpong": "grpc",
}
# The window's fields each transport's client takes, and reports back in its settings.
WINDOW_FIELDS = {
    "rest_unary": ("connections",),
    "rest_h2c": ("connections", "streams"),
    "grpc_unary": ("in_flight",),
    "grpc_stream": ("streams", "messages_per_stream"),
    "grpc_pingpong": ("streams", "messages_per_stream"),
}


def aggregator_settings(info: Dict) -> Dict[str, int]:
    """What shapes the aggregator's windows, from its /actuator/info document."""
    try:
        settings = info["aggregator"]
        found = {
            "in_flight": int(settings["in-flight"]),
            "rest_max_connections": int(settings["rest-max-connections"]),
            "rest_replicas": int(settings["rest-replicas"]),
        }
        for key in ("rest-h2c-connections", "rest-h2c-max-streams"):
            if key in settings:
                found[key.replace("-", "_")] = int(settings[key])
        return found
    except (KeyError, TypeError, ValueError):
        raise FloorError(
            "the aggregator's /actuator/info has no aggregator in-flight, rest-max-connections and "
            "rest-replicas (an aggregator jar from before it said them?): %r" % (info,)
        ) from None


@dataclass(frozen=True)
class Window:
    """What the floor keeps in flight for one transport: the aggregator's window in one combination."""

    transport: str
    in_flight: Optional[int] = None  # grpc_unary: calls in flight on the one channel
    connections: Optional[int] = None  # rest_unary: keep-alive connections, one call on each; rest_h2c: HTTP/2
    streams: Optional[int] = None  # grpc_stream, grpc_pingpong: bidi streams; rest_h2c: calls in flight
    messages_per_stream: Optional[int] = None  # grpc_stream, grpc_pingpong: messages on each stream before a new one
    tls: Optional[str] = None  # "on" or "mtls" over TLS; None in plaintext

    def as_dict(self) -> Dict:
        return {key: value for key, value in asdict(self).items() if value is not None and key != "transport"}

    @classmethod
    def from_record(cls, transport: str, window: Dict) -> "Window":
        return cls(transport, **window)

    def slug(self) -> str:
        """The name of the run's folder under floor/, e.g. grpc_stream_s100_m1000."""
        letters = {"in_flight": "i", "connections": "c", "streams": "s", "messages_per_stream": "m"}
        sizes = ["%s%d" % (letters[key], value) for key, value in self.as_dict().items() if key != "tls"]
        return "_".join([self.transport] + sizes + ([self.tls] if self.tls else []))

    def __post_init__(self) -> None:
        if self.transport not in SERVER_KIND:
            raise FloorError(
                "a floor run of transport %r: results from before the transports were named "
                "rest_unary, grpc_unary and grpc_stream; measure again" % self.transport
            )

    def describe(self) -> str:
        return self._size() + (" · %s" % catalogue.TLS_NAMES[self.tls] if self.tls else "")

    def _size(self) -> str:
        # __post_init__ has checked that the transport's fields are there.
        if self.transport == "grpc_unary":
            return "%s calls in flight" % self.in_flight
        if self.transport == "rest_unary":
            return "%s connections" % self.connections
        if self.transport == "rest_h2c":
            return "%s calls in flight on %s connections" % (self.streams, self.connections)
        return "%s streams × %s messages%s" % (
            self.streams,
            self.messages_per_stream,
            ", one at a time" if self.transport == "grpc_pingpong" else "",
        )

    def client_arguments(self) -> List[str]:
        """The floor client's options for this window: --in-flight, --connections, --streams, --messages."""
        options = {
            "in_flight": "--in-flight",
            "connections": "--connections",
            "streams": "--streams",
            "messages_per_stream": "--messages",
        }
        return [item for key in WINDOW_FIELDS[self.transport] for item in (options[key], str(getattr(self, key)))]

    def check(self, run_settings: Dict) -> List[str]:
        """The differences between this window and the settings a floor run says it used."""
        reported = WINDOW_FIELDS[self.transport]
        return [
            "the floor ran with %s=%s, the aggregator's window is %s" % (key, run_settings.get(key), getattr(self, key))
            for key in reported
            if run_settings.get(key) != getattr(self, key)
        ]


def window_for(
    path_name: str, n: int, concurrency: int, aggregator: Dict[str, int], mode: Optional[str] = None
) -> Optional[Window]:
    """The floor window of one measured combination (over TLS in mode "on" or "mtls"), or None when the path has no
    floor."""
    transport = catalogue.ALL[path_name].transport
    if transport is None or n < 1:
        return None
    calls = concurrency * min(n, aggregator["in_flight"])
    if transport == "grpc_unary":
        return Window(transport, in_flight=calls, tls=mode)
    if transport == "rest_unary":
        # A pool of rest-max-connections per replica.
        pool = aggregator["rest_max_connections"] * aggregator["rest_replicas"]
        return Window(transport, connections=min(pool, calls), tls=mode)
    if transport == "rest_h2c":
        if aggregator.get("rest_h2c_connections") is None:
            raise FloorError(
                "the aggregator's settings have no rest-h2c-connections (an aggregator jar from before "
                "rest/h2c?), so the rest_h2c floor's window is unknown"
            )
        connections = aggregator["rest_h2c_connections"] * aggregator["rest_replicas"]
        # Calls beyond what the connections may carry at once wait in the aggregator's pool.
        streams = min(calls, connections * aggregator.get("rest_h2c_max_streams", calls))
        return Window(transport, connections=min(connections, calls), streams=streams, tls=mode)
    return Window(transport, streams=concurrency, messages_per_stream=n, tls=mode)


Combination = Tuple[str, int, int, Optional[str]]


def mode_of(settings_tls: str) -> Optional[str]:
    """A TLS setting ("off", "on", "mtls") as a window's tls: None in plaintext."""
    return None if settings_tls == catalogue.PLAINTEXT else settings_tls


def combination(run: Dict, settings: Dict) -> Combination:
    """A measured run's combination: (path, n, concurrency, the TLS mode of its stack, None in plaintext)."""
    entry = records.stack_entry(run, settings)
    return run["path"], run["n"], run["concurrency"], mode_of(entry.get("tls", catalogue.PLAINTEXT))


def plan(settings: Dict) -> Tuple[List[Window], Dict[Combination, Window]]:
    """(each distinct window once, in the order the paths ran, TLS mode by mode; the window of every combination
    (path, n, concurrency, TLS mode) that has one).

    The bare transports carry the article's small call on loopback: only the runs of the small payload on loopback
    (compared_with_floor) have a floor, and without such runs there is none."""
    aggregator = settings.get("aggregator")
    windows: List[Window] = []
    by_combination: Dict[Combination, Window] = {}
    if catalogue.SMALL not in (settings.get("payload") or [catalogue.SMALL]) or catalogue.LOOPBACK not in (
        settings.get("network") or [catalogue.LOOPBACK]
    ):
        return windows, by_combination
    for mode in [mode_of(setting) for setting in settings.get("tls") or [catalogue.PLAINTEXT]]:
        for path_name in settings["paths"]:
            for n in settings["n"]:
                for concurrency in settings["concurrency"]:
                    if aggregator is None and catalogue.ALL[path_name].transport is not None:
                        raise FloorError(
                            "results.json records no aggregator settings (settings.aggregator), so the "
                            "floor's windows are unknown"
                        )
                    window = window_for(path_name, n, concurrency, aggregator or {}, mode)
                    if window is None:
                        continue
                    by_combination[(path_name, n, concurrency, mode)] = window
                    if window not in windows:
                        windows.append(window)
    return windows, by_combination


def compared_with_floor(run: Dict) -> bool:
    """Whether a run is one the floor is for: the small payload on loopback (as every run before PAYLOAD and
    NETWORK was)."""
    return (run.get("payload") or catalogue.SMALL) == catalogue.SMALL and (
        run.get("network") or catalogue.LOOPBACK
    ) == catalogue.LOOPBACK


def cpu_us_per_call(floor_run: Dict) -> Optional[float]:
    """The floor's client and server CPU per call, in µs, over its measured window."""
    client, server, calls = (floor_run.get(key) for key in ("client_cpu_seconds", "server_cpu_seconds", "calls"))
    if client is None or server is None or not calls:
        return None
    return round((client + server) * 1e6 / calls, 2)
