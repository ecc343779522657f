"""The services' own metrics: the Prometheus text parser, the deltas of a run and the CI count check."""

import copy
import http.server
import time
import unittest

from lab.core import catalogue, metrics
from lab.core.catalogue import AGGREGATOR, SQUARE_GRPC, SQUARE_REST
from lab.core.errors import MetricsError
from lab.core.metrics import Sample, parse, total
from lab.measure import bench, server_metrics
from lab.results import check_results
from lab.stage.services import Service

from tests import support
from tests.support import sample_results

# The label values as the services write them, not the lab's constants: the tests check those against these.
SQUARE_REST_URI = "/rest/square/unary/{number}"
UNARY, STREAM = "findSquareUnary", "findSquareBiStream"
_SQUARE_RPC = {UNARY: "UNARY", STREAM: "BIDI_STREAMING"}


def page(service, count, seconds, calls=None, call_seconds=0.0, of=None, method="GET"):
    """One service's /actuator/prometheus page, with only the series the lab reads, written as the service writes
    them (names, labels and # TYPE lines as in the services' real pages).

    The aggregator: `count` successful requests of transport `of`, `seconds` in all, which made `calls` downstream
    calls, `call_seconds` in all. square-rest-service: `count` calls of the square endpoint with `method` (GET; a
    payload shape's are POST), `seconds` in all.
    square-grpc-service: `count` calls (or streams) of method `of`, `seconds` in all, which received `calls`
    messages (`count` by default). Beside each series the lab reads, the ones it must leave out (the aggregator's
    error outcome and other transports; the other URIs and methods) hold ten times the calls, each ten times as
    long: a delta that took one in, or read one instead, would be off.
    """
    calls = count if calls is None else calls
    if service == AGGREGATOR:
        read = {"outcome": "success", "transport": of}
        left_out = [{"outcome": "error", "transport": of}] + [
            {"outcome": "success", "transport": other}
            for other in ("rest_unary", "grpc_unary", "grpc_stream")
            if other != of
        ]
        families = [
            ("aggregator_downstream_calls_total", "counter", {}, {"": float(calls)}),
            ("aggregator_downstream_latency_seconds", "histogram", {}, {"_count": calls, "_sum": call_seconds}),
            ("aggregator_fanout_seconds", "histogram", {}, {"_count": count, "_sum": seconds}),
        ]
    elif service == SQUARE_REST:
        ok = {"error": "none", "exception": "none", "method": method, "outcome": "SUCCESS", "status": "200"}
        read = dict(ok, uri=SQUARE_REST_URI)
        left_out = [dict(ok, uri="/actuator/prometheus"), dict(ok, method="HEAD", uri=SQUARE_REST_URI)]
        families = [("http_server_requests_seconds", "histogram", {}, {"_count": count, "_sum": seconds})]
    else:
        read = {"method": of, "methodType": _SQUARE_RPC[of], "service": "vinsmath.SquareRpc"}
        left_out = [
            {"method": other, "methodType": kind, "service": "vinsmath.SquareRpc"}
            for other, kind in _SQUARE_RPC.items()
            if other != of
        ]
        left_out.append({"method": "Check", "methodType": "UNARY", "service": "grpc.health.v1.Health"})
        families = [
            (
                "grpc_server_processing_duration_seconds",
                "histogram",
                {"statusCode": "OK"},
                {"_count": count, "_sum": seconds},
            ),
            ("grpc_server_requests_received_messages_total", "counter", {}, {"": float(calls)}),
        ]
    lines = []
    for name, kind, more, values in families:
        lines.append("# TYPE %s %s" % (name, kind))
        for labels, times in [(read, 1)] + [(labels, 10) for labels in left_out]:
            text = ",".join('%s="%s"' % item for item in sorted(dict(labels, application=service, **more).items()))
            for suffix, value in values.items():
                # A series left out: ten times the calls (_count, counters), each ten times as long (_sum).
                factor = times * times if suffix == "_sum" else times
                lines.append("%s%s{%s} %r" % (name, suffix, text, value * factor))
    return "\n".join(lines) + "\n"


class ParserTests(unittest.TestCase):
    def test_samples_keep_their_full_names_labels_and_values(self):
        samples = parse(
            "# HELP aggregator_fanout_seconds One request\n"
            "# TYPE aggregator_fanout_seconds summary\n"
            'aggregator_fanout_seconds_count{application="aggregator-service",outcome="success",'
            'transport="rest_unary",} 70.0\n'
            "# TYPE process_uptime_seconds gauge\n"
            "process_uptime_seconds 12.5\n"
        )

        self.assertEqual(
            samples,
            [
                Sample(
                    "aggregator_fanout_seconds_count",
                    {"application": "aggregator-service", "outcome": "success", "transport": "rest_unary"},
                    70.0,
                ),
                Sample("process_uptime_seconds", {}, 12.5),
            ],
        )

    def test_a_page_that_is_not_the_text_format_is_an_error(self):
        with self.assertRaisesRegex(MetricsError, "not a Prometheus text-format page"):
            parse('ok 1\nbroken{a="1" 2\n')

    def test_total_sums_the_series_whose_labels_match(self):
        samples = parse(
            'c{method="GET",status="200",uri="/a"} 3\n'
            'c{method="GET",status="500",uri="/a"} 1\n'
            'c{method="GET",status="200",uri="/b"} 7\n'
        )

        self.assertEqual(total(samples, "c", uri="/a"), 4)
        self.assertEqual(total(samples, "c", uri="/a", status="200"), 3)
        self.assertEqual(total(samples, "c", uri="/none"), 0)
        self.assertEqual(total(samples, "other"), 0)

    def test_a_histogram_with_its_buckets_parses(self):
        # As square-rest-service writes its timer with percentile histograms on: cumulative buckets, then _count, _sum.
        series = 'application="square-rest-service",method="GET",uri="%s"'
        samples = parse(
            "# TYPE http_server_requests_seconds histogram\n"
            'http_server_requests_seconds_bucket{%s,le="0.001"} 6\n'
            'http_server_requests_seconds_bucket{%s,le="0.005"} 9\n'
            'http_server_requests_seconds_bucket{%s,le="+Inf"} 10\n'
            "http_server_requests_seconds_count{%s} 10\n"
            "http_server_requests_seconds_sum{%s} 0.02\n"
            % ((series % SQUARE_REST_URI,) * 5)
            + 'http_server_requests_seconds_bucket{%s,le="0.001"} 0\n'
            'http_server_requests_seconds_bucket{%s,le="0.005"} 2\n'
            'http_server_requests_seconds_bucket{%s,le="+Inf"} 3\n'
            "http_server_requests_seconds_count{%s} 3\n"
            "http_server_requests_seconds_sum{%s} 0.012\n"
            % ((series % "/actuator/prometheus",) * 5)
            + "# TYPE http_server_requests_seconds_max gauge\n"
            "http_server_requests_seconds_max{%s} 0.004\n" % (series % SQUARE_REST_URI)
        )

        self.assertEqual(len(samples), 11)
        self.assertEqual(total(samples, "http_server_requests_seconds_bucket", uri=SQUARE_REST_URI, le="0.005"), 9)
        self.assertEqual(
            total(samples, "http_server_requests_seconds_bucket", uri=SQUARE_REST_URI, le="+Inf"),
            total(samples, "http_server_requests_seconds_count", uri=SQUARE_REST_URI),
        )
        self.assertEqual(total(samples, "http_server_requests_seconds_bucket", le="+Inf"), 13)
        self.assertEqual(total(samples, "http_server_requests_seconds_count"), 13)
        self.assertEqual({s.labels.get("application") for s in samples}, {"square-rest-service"})


class DeltaTests(unittest.TestCase):
    """Each path once first (1 request x n=25), then ab -n 20 on it at n=25: the deltas are of the 20 requests."""

    def test_rest_unary_deltas(self):
        side = metrics.server_side(
            catalogue.ALL["rest/unary"],
            {
                AGGREGATOR: parse(page(AGGREGATOR, 1, 0.25, calls=25, call_seconds=1.0, of="rest_unary")),
                SQUARE_REST: parse(page(SQUARE_REST, 25, 0.15)),
            },
            {
                AGGREGATOR: parse(page(AGGREGATOR, 21, 3.25, calls=525, call_seconds=38.5, of="rest_unary")),
                SQUARE_REST: parse(page(SQUARE_REST, 525, 3.15)),
            },
        )

        # 20 requests x n = 25: every square served by square-rest-service came from its own call.
        self.assertEqual(
            side,
            {
                "aggregator_requests": 20,
                "aggregator_ms_per_request": 150.0,
                "downstream_calls": 500,
                "client_us_per_call": 75000.0,
                "square_service": SQUARE_REST,
                "square_calls": 500,
                "square_us_per_call": 6000.0,
            },
        )

    def test_each_services_jit_compiling_over_the_run(self):
        def compiled(ms: float) -> str:
            return 'jvm_compilation_time_ms_total{compiler="HotSpot 64-Bit Tiered Compilers"} %.1f\n' % ms

        side = metrics.server_side(
            catalogue.ALL["rest/unary"],
            {
                AGGREGATOR: parse(
                    page(AGGREGATOR, 1, 0.25, calls=25, call_seconds=1.0, of="rest_unary") + compiled(9000)
                ),
                SQUARE_REST: parse(page(SQUARE_REST, 25, 0.15) + compiled(7000)),
            },
            {
                AGGREGATOR: parse(
                    page(AGGREGATOR, 21, 3.25, calls=525, call_seconds=38.5, of="rest_unary") + compiled(9420.5)
                ),
                SQUARE_REST: parse(page(SQUARE_REST, 525, 3.15) + compiled(7000)),
            },
        )

        self.assertEqual({AGGREGATOR: 420.5, SQUARE_REST: 0.0}, side["jit_compile_ms"])

    def test_rest_calls_with_a_payload_shape_post_to_the_same_uri_and_count_alike(self):
        side = metrics.server_side(
            catalogue.ALL["rest/unary"],
            {
                AGGREGATOR: parse(page(AGGREGATOR, 1, 0.25, calls=25, call_seconds=1.0, of="rest_unary")),
                SQUARE_REST: parse(page(SQUARE_REST, 25, 0.15, method="POST")),
            },
            {
                AGGREGATOR: parse(page(AGGREGATOR, 21, 3.25, calls=525, call_seconds=38.5, of="rest_unary")),
                SQUARE_REST: parse(page(SQUARE_REST, 525, 3.15, method="POST")),
            },
        )

        self.assertEqual((side["square_calls"], side["square_us_per_call"]), (500, 6000.0))

    def test_grpc_unary_deltas(self):
        side = metrics.server_side(
            catalogue.ALL["grpc/unary"],
            {
                AGGREGATOR: parse(page(AGGREGATOR, 1, 0.2, calls=25, call_seconds=2.5, of="grpc_unary")),
                SQUARE_GRPC: parse(page(SQUARE_GRPC, 25, 1.0, of=UNARY)),
            },
            {
                AGGREGATOR: parse(page(AGGREGATOR, 21, 2.2, calls=525, call_seconds=62.5, of="grpc_unary")),
                SQUARE_GRPC: parse(page(SQUARE_GRPC, 525, 21.0, of=UNARY)),
            },
        )

        self.assertEqual(
            side,
            {
                "aggregator_requests": 20,
                "aggregator_ms_per_request": 100.0,
                "downstream_calls": 500,
                "client_us_per_call": 120000.0,
                "square_service": SQUARE_GRPC,
                "square_calls": 500,
                "square_us_per_call": 40000.0,
            },
        )

    def test_grpc_stream_deltas_name_the_server_time_an_upper_bound(self):
        side = metrics.server_side(
            catalogue.ALL["grpc/stream"],
            {name: parse(text) for name, text in _stream_pages(before=True).items()},
            {name: parse(text) for name, text in _stream_pages(before=False).items()},
        )

        # 20 streams of 25 messages: square-grpc-service times whole streams, 0.3 s in all over 500 messages.
        self.assertEqual(
            side,
            {
                "aggregator_requests": 20,
                "aggregator_ms_per_request": 30.0,
                "downstream_calls": 500,
                "client_us_per_call": 20000.0,
                "square_service": SQUARE_GRPC,
                "square_calls": 500,
                "square_streams": 20,
                "square_us_per_call": None,
                "square_us_per_call_upper_bound": 600.0,
            },
        )

    def test_the_pipelined_streams_time_per_message_is_its_requests_time_over_its_messages_on_both_sides(self):
        side = metrics.server_side(
            catalogue.ALL["grpc/stream"],
            {name: parse(text) for name, text in _stream_pages(before=True).items()},
            {name: parse(text) for name, text in _stream_pages(before=False).items()},
        )

        times = metrics.call_times(side, "grpc_stream", 25)

        # 30 ms a request over its 25 messages, not a message's 20 ms send to answer spent mostly behind the others;
        # the server's 0.3 s of whole streams over its 500 messages. Both upper bounds.
        self.assertEqual(times, {"client_us": 1200.0, "client_bound": True, "server_us": 600.0, "server_bound": True})

    def test_a_unary_calls_time_is_the_calls_own_on_both_sides(self):
        side = {"aggregator_ms_per_request": 100.0, "client_us_per_call": 120000.0, "square_us_per_call": 40000.0}

        self.assertEqual(
            metrics.call_times(side, "grpc_unary", 25),
            {"client_us": 120000.0, "client_bound": False, "server_us": 40000.0, "server_bound": False},
        )

    def test_the_baseline_has_no_aggregator_figures(self):
        # ab -n 30 straight at square-rest-service's square endpoint.
        side = metrics.server_side(
            catalogue.ALL["rest/square"],
            {SQUARE_REST: parse(page(SQUARE_REST, 525, 3.15))},
            {SQUARE_REST: parse(page(SQUARE_REST, 555, 3.21))},
        )

        self.assertEqual(
            side,
            {
                "aggregator_requests": None,
                "aggregator_ms_per_request": None,
                "downstream_calls": None,
                "client_us_per_call": None,
                "square_service": SQUARE_REST,
                "square_calls": 30,
                "square_us_per_call": 2000.0,
            },
        )


def _stream_pages(before):
    """The pages of the grpc/stream path before and after its 20 requests x n=25."""
    if before:
        return {
            AGGREGATOR: page(AGGREGATOR, 1, 0.03, calls=25, call_seconds=0.5, of="grpc_stream"),
            SQUARE_GRPC: page(SQUARE_GRPC, 1, 0.02, calls=25, of=STREAM),
        }
    return {
        AGGREGATOR: page(AGGREGATOR, 21, 0.63, calls=525, call_seconds=10.5, of="grpc_stream"),
        SQUARE_GRPC: page(SQUARE_GRPC, 21, 0.32, calls=525, of=STREAM),
    }


class _Pages(http.server.BaseHTTPRequestHandler):
    # URL path -> the pages it serves, one per request; the last one again once they are used up.
    served = {}

    def do_GET(self):
        queue = self.served.get(self.path)
        if not queue:
            self.send_error(404)
            return
        body = (queue.pop(0) if len(queue) > 1 else queue[0]).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain;version=0.0.4;charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


class ScrapeOverHttpTests(unittest.TestCase):
    """What bench does around a measured run, against pages served over HTTP on loopback."""

    @classmethod
    def setUpClass(cls):
        cls.server = support.LoopbackServer(_Pages)
        cls.base = cls.server.base

    @classmethod
    def tearDownClass(cls):
        cls.server.close()

    def test_before_and_after_the_run(self):
        before, after = _stream_pages(before=True), _stream_pages(before=False)
        _Pages.served = {
            "/agg/actuator/prometheus": [before[AGGREGATOR]] * 3 + [after[AGGREGATOR]],
            "/grpc/actuator/prometheus": [before[SQUARE_GRPC]] * 3 + [after[SQUARE_GRPC]],
        }
        urls = {
            AGGREGATOR: self.base + "/agg/actuator/prometheus",
            SQUARE_GRPC: self.base + "/grpc/actuator/prometheus",
        }
        path = catalogue.ALL["grpc/stream"]

        before, error = bench._scrape(urls, path)
        side = bench._server_side(path, urls, before, error)

        self.assertIsNone(error)
        self.assertEqual((side["aggregator_requests"], side["downstream_calls"], side["square_calls"]), (20, 500, 500))

    def test_an_unreadable_page_or_a_missing_url_gives_an_error_not_figures(self):
        _Pages.served = {
            "/agg/actuator/prometheus": [page(AGGREGATOR, 21, 2.2, calls=525, call_seconds=62.5, of="grpc_unary")]
        }
        path = catalogue.ALL["grpc/unary"]
        missing = {AGGREGATOR: self.base + "/agg/actuator/prometheus", SQUARE_GRPC: self.base + "/nothing"}

        before, error = bench._scrape(missing, path)
        self.assertIsNone(before)
        self.assertRegex(
            bench._server_side(path, missing, before, error)["error"],
            r"^no server-side figures: cannot read http://127\.0\.0\.1:\d+/nothing: ",
        )
        self.assertEqual(bench._scrape({AGGREGATOR: self.base}, path), (None, "no metrics URL for square-grpc-service"))

    def test_after_a_warm_up_the_measured_run_waits_until_the_aggregator_holds_no_request(self):
        busy = '# TYPE aggregator_admission_squares gauge\naggregator_admission_squares{application="a"} 3000.0\n'
        _Pages.served = {"/agg/actuator/prometheus": [busy, busy, busy.replace("3000.0", "0.0")]}
        service = Service(AGGREGATOR, [1], self.base, [self.base + "/agg/actuator/prometheus"])
        pauses, said = [], []

        bench._await_idle(catalogue.ALL["grpc/unary"], [service], 10, said.append, sleep=pauses.append)

        self.assertEqual(len(pauses), 2)
        self.assertEqual(said, [])
        _Pages.served = {"/agg/actuator/prometheus": [busy]}
        bench._await_idle(catalogue.ALL["grpc/unary"], [service], 0.5, said.append, sleep=lambda s: time.sleep(0.1))
        self.assertEqual(said, ["  warning: the aggregator still held requests of the warm-up after 0.5 s"])


class SettleTests(unittest.TestCase):
    def test_scrapes_again_until_the_last_calls_are_recorded(self):
        path = catalogue.ALL["rest/square"]
        before = {catalogue.SQUARE_REST: parse(page(SQUARE_REST, 10, 1.0))}
        # The last call's metrics land a moment after ab got its answer.
        pages = iter([page(SQUARE_REST, 59, 1.5), page(SQUARE_REST, 60, 1.5), page(SQUARE_REST, 60, 1.5)])

        after, record = server_metrics.settle(
            path, before, lambda: {catalogue.SQUARE_REST: parse(next(pages))}, sleep=lambda _: None
        )

        self.assertEqual(record["square_calls"], 50)
        self.assertEqual(record["square_us_per_call"], 10000.0)
        self.assertIsNone(record["aggregator_requests"])

    def test_a_jit_still_compiling_does_not_keep_it_scraping(self):
        path = catalogue.ALL["rest/square"]
        before = {catalogue.SQUARE_REST: parse(page(SQUARE_REST, 10, 1.0))}
        compiled = iter(range(1000, 2000, 10))
        reads = []

        def read():
            reads.append(1)
            text = page(SQUARE_REST, 60, 1.5) + 'jvm_compilation_time_ms_total{compiler="HotSpot"} %d\n' % next(
                compiled
            )
            return {catalogue.SQUARE_REST: parse(text)}

        after, record = server_metrics.settle(path, before, read, sleep=lambda _: None)

        self.assertEqual(2, len(reads))
        self.assertEqual(50, record["square_calls"])


class ServerSideCheckTests(unittest.TestCase):
    def test_consistent_counts_pass(self):
        self.assertEqual(check_results.problems(sample_results()), [])

    def test_a_square_without_its_own_call_fails_with_the_counts(self):
        data = sample_results()
        # rest/unary: 1000 requests x n=1000; the square service served one call more than the aggregator made.
        data["runs"][0]["server_side"]["square_calls"] += 1
        data["runs"][2]["server_side"]["downstream_calls"] -= 5
        data["runs"][1]["server_side"]["aggregator_requests"] = 199

        found = check_results.problems(data)

        self.assertEqual(
            found,
            [
                "rest/unary n=1000 c=100: square-rest-service served 1000001 square calls, "
                "expected 1000000 (1000 requests x 1000)",
                "grpc/unary n=1000 c=100: the aggregator counted 199 successful requests, ab completed 200",
                "grpc/stream n=1000 c=100: the aggregator made 199995 downstream calls, "
                "expected 200000 (200 requests x n=1000)",
            ],
        )

    def test_missing_or_unreadable_figures_fail(self):
        data = sample_results()
        del data["runs"][0]["server_side"]
        data["runs"][1]["server_side"] = {"error": "no server-side figures: cannot read http://127.0.0.1:1/x: refused"}

        found = check_results.problems(data)

        self.assertIn("rest/unary n=1000 c=100: no server-side figures (server_side is missing)", found)
        self.assertIn(
            "grpc/unary n=1000 c=100: no server-side figures: cannot read http://127.0.0.1:1/x: refused", found
        )

    def test_with_failed_requests_the_count_check_is_skipped_and_says_so(self):
        data = sample_results()
        data["runs"][0]["failed"] = 2
        data["runs"][0]["server_side"]["square_calls"] = 7

        found = check_results.problems(data)

        self.assertEqual(found, ["rest/unary n=1000 c=100: 2 failed requests"])
        self.assertEqual(
            check_results.notes(data),
            [
                "rest/unary n=1000 c=100: server-side count check skipped: 2 failed and 0 non-2xx requests: "
                "square calls not compared with requests x n"
            ],
        )

    def test_the_baseline_path_compares_square_calls_with_requests(self):
        data = sample_results()
        run = copy.deepcopy(data["runs"][0])
        run.update(path="rest/square", services=[catalogue.SQUARE_REST])
        run["server_side"] = {
            "aggregator_requests": None,
            "aggregator_ms_per_request": None,
            "downstream_calls": None,
            "client_us_per_call": None,
            "square_service": catalogue.SQUARE_REST,
            "square_calls": 1000,
            "square_us_per_call": 30.0,
        }
        self.assertEqual(check_results.run_problems(run), [])
        run["server_side"]["square_calls"] = 1001
        self.assertEqual(
            check_results.run_problems(run),
            ["square-rest-service served 1001 square calls, expected 1000 (1000 requests x 1)"],
        )


if __name__ == "__main__":
    unittest.main()
