"""The services' own view of a run: their /actuator/prometheus metrics, scraped right before and right after
the measured ab run, and what changed in between.

ab sees requests; the aggregator counts the requests it fanned out and the downstream calls (or stream
messages) it made, and times each one as its client; the square services count and time what they served.
The deltas over exactly the measured run let the lab compare a downstream call's time on both sides of the
wire, and prove that every square came from its own call: square calls == downstream calls == requests x n.

No Prometheus server is needed: the lab reads the services' text exposition itself, with prometheus_client's parser.
"""

import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Union

from prometheus_client.parser import text_string_to_metric_families

from .catalogue import AGGREGATOR, SQUARE_GRPC, SQUARE_REST, Path
from .errors import MetricsError

# The URI template Spring's http_server_requests metric gives square-rest-service's square endpoint.
SQUARE_REST_URI = "/rest/square/unary/{number}"
# The article's call GETs its square; a call with a payload shape (PAYLOAD) POSTs the shape to the same URI.
SQUARE_REST_METHODS = ("GET", "POST")
GRPC_UNARY_METHOD = "findSquareUnary"
GRPC_STREAM_METHOD = "findSquareBiStream"
# The aggregator's gauges of work it holds, each 0 when it is idle: squares admitted and not answered (its budget's,
# a deadline path's), fan-out requests admitted whose answer is not written yet (absent from older aggregators), and
# downstream calls in flight. Not its other admission gauges: maxima, a path's recent rate (NaN until measured) and
# its longest wait stay above 0 (or NaN) when it is idle.
IN_FLIGHT_GAUGE = "aggregator_downstream_inflight"
ADMISSION_WORK_GAUGES = (
    "aggregator_admission_squares",
    "aggregator_admission_deadline_squares",
    "aggregator_admission_requests",
)
WORK_GAUGES = ADMISSION_WORK_GAUGES + (IN_FLIGHT_GAUGE,)


@dataclass(frozen=True)
class Sample:
    """One line of the text exposition format: name{labels} value."""

    name: str
    labels: Dict[str, str]
    value: float


def parse(text: str) -> List[Sample]:
    """Every sample of a Prometheus text-format page, in order, read by prometheus_client's parser."""
    try:
        return [
            Sample(sample.name, dict(sample.labels), sample.value)
            for family in text_string_to_metric_families(text)
            for sample in family.samples
        ]
    except ValueError as error:
        raise MetricsError("not a Prometheus text-format page: %s" % error) from None


def total(samples: List[Sample], name: str, **labels: str) -> float:
    """The sum of every sample of the metric whose labels include the given ones (0 when there is none)."""
    return sum(
        s.value for s in samples if s.name == name and all(s.labels.get(key) == value for key, value in labels.items())
    )


def work_gauges(samples: List[Sample]) -> Dict[str, float]:
    """Each of WORK_GAUGES on the page, by name, summed over its labels (transport); one not exposed is left out."""
    found: Dict[str, float] = {}
    for sample in samples:
        if sample.name in WORK_GAUGES:
            found[sample.name] = found.get(sample.name, 0.0) + sample.value
    return found


def scrape(url: str, timeout_s: float = 10.0) -> List[Sample]:
    """The parsed samples of one /actuator/prometheus page."""
    try:
        with urllib.request.urlopen(url, timeout=timeout_s) as response:
            return parse(response.read().decode("utf-8", "replace"))
    except (urllib.error.URLError, OSError) as error:
        raise MetricsError("cannot read %s: %s" % (url, getattr(error, "reason", error))) from None


def scrape_all(urls: Mapping[str, Union[str, List[str]]], timeout_s: float = 10.0) -> Dict[str, List[Sample]]:
    """Each service's samples, by module name; a service's replicas' samples together, so that totals add them up."""
    return {
        name: [sample for url in ([some] if isinstance(some, str) else some) for sample in scrape(url, timeout_s)]
        for name, some in urls.items()
    }


# Micrometer's JVM compilation time (JvmCompilationMetrics), which every service exposes.
COMPILE_METRIC = "jvm_compilation_time_ms_total"


def server_side(path: Path, before: Mapping[str, List[Sample]], after: Mapping[str, List[Sample]]) -> Dict:
    """What the services counted and timed between two scrapes, for one path.

    aggregator_requests, aggregator_ms_per_request: the aggregator's successful requests of this transport,
    and their mean time inside the aggregator. downstream_calls, client_us_per_call: the squares the
    aggregator asked for (calls, or stream messages) in successful requests, and the mean time of one as its
    client sees it (send to answer). square_calls, square_us_per_call: what the square service served, and its
    own mean processing time of one. On the stream, the square service times whole streams, which include
    waiting for the client's next message: their time over the messages received is only an upper bound of
    the time per message, so it is square_us_per_call_upper_bound there, and square_us_per_call is None.
    jit_compile_ms: each service's JIT compiling over the run, in ms: code still being compiled is measured slower.
    """

    def delta(service: str, name: str, **labels: str) -> float:
        return total(after[service], name, **labels) - total(before[service], name, **labels)

    record: Dict[str, Any] = {
        "aggregator_requests": None,
        "aggregator_ms_per_request": None,
        "downstream_calls": None,
        "client_us_per_call": None,
    }
    transport = path.transport or ""
    if path.target == AGGREGATOR:
        ok = {"transport": transport, "outcome": "success"}
        requests = delta(AGGREGATOR, "aggregator_fanout_seconds_count", **ok)
        client_calls = delta(AGGREGATOR, "aggregator_downstream_latency_seconds_count", **ok)
        record.update(
            aggregator_requests=_count(requests),
            aggregator_ms_per_request=_per(delta(AGGREGATOR, "aggregator_fanout_seconds_sum", **ok) * 1e3, requests),
            downstream_calls=_count(delta(AGGREGATOR, "aggregator_downstream_calls_total", **ok)),
            client_us_per_call=_per(
                delta(AGGREGATOR, "aggregator_downstream_latency_seconds_sum", **ok) * 1e6, client_calls
            ),
        )
    square = path.downstream or path.target
    if square == SQUARE_REST:

        def rest_delta(name: str) -> float:
            return sum(delta(SQUARE_REST, name, uri=SQUARE_REST_URI, method=method) for method in SQUARE_REST_METHODS)

        calls = rest_delta("http_server_requests_seconds_count")
        record.update(
            square_service=SQUARE_REST,
            square_calls=_count(calls),
            square_us_per_call=_per(rest_delta("http_server_requests_seconds_sum") * 1e6, calls),
        )
    elif transport == "grpc_unary":
        method = {"method": GRPC_UNARY_METHOD}
        calls = delta(SQUARE_GRPC, "grpc_server_processing_duration_seconds_count", **method)
        record.update(
            square_service=SQUARE_GRPC,
            square_calls=_count(calls),
            square_us_per_call=_per(
                delta(SQUARE_GRPC, "grpc_server_processing_duration_seconds_sum", **method) * 1e6, calls
            ),
        )
    else:
        method = {"method": GRPC_STREAM_METHOD}
        messages = delta(SQUARE_GRPC, "grpc_server_requests_received_messages_total", **method)
        record.update(
            square_service=SQUARE_GRPC,
            square_calls=_count(messages),
            square_streams=_count(delta(SQUARE_GRPC, "grpc_server_processing_duration_seconds_count", **method)),
            square_us_per_call=None,
            square_us_per_call_upper_bound=_per(
                delta(SQUARE_GRPC, "grpc_server_processing_duration_seconds_sum", **method) * 1e6, messages
            ),
        )
    compiling = [service for service in after if any(s.name == COMPILE_METRIC for s in after[service])]
    if compiling:
        record["jit_compile_ms"] = {service: round(delta(service, COMPILE_METRIC), 1) for service in compiling}
    return record


# The transport whose messages are pipelined: each waits behind those sent before it on its stream.
PIPELINED = "grpc_stream"


def call_times(record: Dict, transport: Optional[str], n: int) -> Dict:
    """One downstream call's (or stream message's) mean time on each side, as the report sets them side by side:
    client_us and server_us, each with whether it is only an upper bound.

    On the pipelined stream a message's send-to-answer time (client_us_per_call) includes its wait behind the messages
    sent before it on its stream, most of the stream's time: not one message's. There the client side is, as the
    server side already is, the stream's time spread over its messages: the aggregator's mean time per request over
    its n messages, an upper bound, as the request also decodes and answers around the stream.
    """
    client, client_bound = record.get("client_us_per_call"), False
    if transport == PIPELINED and n:
        per_request = record.get("aggregator_ms_per_request")
        client, client_bound = (None if per_request is None else round(per_request * 1e3 / n, 3)), True
    bound = record.get("square_us_per_call_upper_bound")
    return {
        "client_us": client,
        "client_bound": client_bound,
        "server_us": record.get("square_us_per_call") if bound is None else bound,
        "server_bound": bound is not None,
    }


def _calls(record: Dict) -> Dict:
    """A server_side record without the JIT's time, which climbs while the JIT compiles whether calls lag or not."""
    return {key: value for key, value in record.items() if key != "jit_compile_ms"}


def _count(value: float) -> int:
    return int(round(value))


def _per(amount: float, count: float) -> Optional[float]:
    return round(amount / count, 3) if count > 0 else None
