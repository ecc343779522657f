"""How long a request and one call may take on each network (NETWORK): the aggregator's aggregator.deadline and
aggregator.call-deadline, and the load generator's timeout (ab -s, Vegeta -timeout).

On loopback the lab keeps what it always did: the aggregator's deadline and the load generator's timeout are
AB_TIMEOUT, and a call has the aggregator's own call deadline (its application.yml's). A slower network must not be
measured as 504s, so a proxied profile adds to each twice what the slowest measured combination could need on it, from

- the round trips: a request of n calls makes up to n of them one after the other (grpc/pingpong does; unary calls
  n / in-flight, unless they wait for one of the REST pool's connections, of which c requests share
  rest.max-connections per replica: then n x c / connections);
- the bandwidth: each connection has the profile's rate, and gRPC carries every call of every request on one, so the
  bytes of c x n calls of the shape may queue on it.

A call waits behind at most c x min(n, in-flight) calls for a pooled connection: its bound is that many round trips
over the pool's connections, plus one, plus their bytes. AGGREGATOR_ARGS may set either deadline itself, and then
that holds on every network.
"""

import functools
import math
import re
from dataclasses import asdict, dataclass
from typing import Dict, List, Optional, Tuple

from ..core import paths
from ..core.errors import LabError
from ..core.settings import Settings
from .network import Profile

# The aggregator's defaults are read from its own application.yml: these deadlines are arguments the aggregator is
# started with, so no aggregator runs yet whose /actuator/info could say them.
AGGREGATOR_YML = paths.AGGREGATOR_YML
# A generous bound of the bytes one call of each payload shape carries in one direction, as JSON (protobuf's are
# fewer): the article's call with its headers, a tree of 61 objects, 8 nested ones, a list of 100.
PAYLOAD_BYTES = {"small": 200, "wide": 4500, "deep": 700, "collection": 6500}


@dataclass(frozen=True)
class AggregatorDefaults:
    """The aggregator's own settings that bound a call's wait, where AGGREGATOR_ARGS does not set them."""

    in_flight: int
    rest_max_connections: int
    call_deadline_s: int


@functools.lru_cache(maxsize=None)
def aggregator_defaults(path: str = AGGREGATOR_YML) -> AggregatorDefaults:
    """aggregator.in-flight, aggregator.rest.max-connections and aggregator.call-deadline from application.yml."""
    try:
        with open(path, encoding="utf-8") as yml:
            values = yaml_scalars(yml.read())
        return AggregatorDefaults(
            int(values["aggregator.in-flight"]),
            int(values["aggregator.rest.max-connections"]),
            duration_s(values["aggregator.call-deadline"]),
        )
    except (OSError, KeyError, ValueError) as e:
        raise LabError(
            "cannot read the aggregator's in-flight, rest.max-connections and call-deadline from %s: %s" % (path, e)
        ) from None


def yaml_scalars(text: str) -> Dict[str, str]:
    """The scalars of a block-style YAML file of nested maps (as Spring's application.yml), by dotted key path."""
    found: Dict[str, str] = {}
    parents: List[Tuple[int, str]] = []
    for line in text.splitlines():
        content = line.split(" #", 1)[0].rstrip()
        if not content.strip() or content.lstrip().startswith("#") or ":" not in content:
            continue
        indent = len(content) - len(content.lstrip())
        key, _, value = content.strip().partition(":")
        while parents and parents[-1][0] >= indent:
            parents.pop()
        dotted = ".".join([name for _, name in parents] + [key])
        if value.strip():
            found[dotted] = value.strip()
        else:
            parents.append((indent, key))
    return found


def duration_s(value: str) -> int:
    """Whole seconds, rounded up, of a Spring duration such as 10s, 2500ms or 1m."""
    match = re.fullmatch(r"(\d+)(ms|s|m)", value)
    if not match:
        raise ValueError("%r is not a duration of ms, s or m" % value)
    amount, unit = int(match.group(1)), match.group(2)
    return math.ceil(amount * {"ms": 0.001, "s": 1, "m": 60}[unit])


@dataclass(frozen=True)
class Deadlines:
    """What a network's runs use: seconds, whole, as ab takes them. call_s None: the aggregator's own."""

    request_s: int
    call_s: Optional[int]
    client_timeout_s: int
    how: str

    def as_dict(self) -> Dict:
        return asdict(self)


def for_network(profile: Profile, settings: Settings) -> Deadlines:
    """The deadlines and timeout of one network's runs."""
    if not profile.rtt_ms and not profile.rate_mbit_s:
        return Deadlines(
            settings.ab_timeout_s,
            None,
            settings.ab_timeout_s,
            "AB_TIMEOUT for the request and the load generator; the aggregator's own call deadline",
        )
    request_bound, call_bound = slowest(profile, settings)
    extra_request, extra_call = math.ceil(2 * request_bound), math.ceil(2 * call_bound)
    call_deadline_s = aggregator_defaults().call_deadline_s
    return Deadlines(
        settings.ab_timeout_s + extra_request,
        call_deadline_s + extra_call,
        settings.ab_timeout_s + extra_request,
        "AB_TIMEOUT + %d s for the request and the load generator, %d s + %d s for a call: twice the "
        "slowest request (%.2f s) and call (%.2f s) the measured combinations could need on %s"
        % (extra_request, call_deadline_s, extra_call, request_bound, call_bound, profile.name),
    )


def slowest(profile: Profile, settings: Settings) -> Tuple[float, float]:
    """(request, call) seconds the network could add at most, over every combination measured on it."""
    defaults = aggregator_defaults()
    in_flight = aggregator_option(settings.aggregator_args, "aggregator.in-flight", defaults.in_flight)
    connections = (
        aggregator_option(settings.aggregator_args, "aggregator.rest.max-connections", defaults.rest_max_connections)
        * settings.replicas
    )
    rtt_s = profile.rtt_ms / 1000
    request = call = 0.0
    for _, shape, n, point in settings.combinations():
        # An open loop's rate: about one second of requests in flight at once.
        clients = point
        waiting = clients * min(n, in_flight)
        request = max(
            request, rtt_s * n * max(1.0, clients / connections) + transfer_s(clients * n, shape, profile.rate_mbit_s)
        )
        call = max(
            call, rtt_s * (math.ceil(waiting / connections) + 1) + transfer_s(waiting, shape, profile.rate_mbit_s)
        )
    return request, call


def transfer_s(calls: int, shape: str, rate_mbit_s: Optional[int]) -> float:
    """Seconds the bytes of that many calls of a shape take on one connection of the profile's rate."""
    if not rate_mbit_s:
        return 0.0
    return calls * PAYLOAD_BYTES[shape] * 8 / (rate_mbit_s * 1e6)


def aggregator_option(arguments: str, name: str, default: int) -> int:
    """A whole-number --name=value from AGGREGATOR_ARGS, or the aggregator's default."""
    found: List[str] = re.findall(r"--%s=(\d+)\b" % re.escape(name), arguments)
    return int(found[-1]) if found else default
