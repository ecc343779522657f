"""The services' own metrics: the Prometheus text parser, the deltas of a run and the CI count check."""

import copy
import http.server
import time
import unittest

from lab import bench, check_results, paths, server_metrics
from lab.paths import AGGREGATOR, SQUARE_GRPC, SQUARE_REST
from lab.server_metrics import MetricsError, Sample, parse, total

from tests import support
from tests.support import fixture, sample_results


def page(name):
    """A real /actuator/prometheus page, parsed.

    fixtures/metrics/ holds the pages of the three services started from their jars, read (curl) at moments
    0 to 4: each path was called once first, then 0; ab -n 20 -c 4 .../rest/unary/25; 1; the same on
    grpc/unary/25; 2; on grpc/stream/25; 3; ab -n 30 -c 3 straight at square-rest-service's /rest/square/unary/9; 4.
    Histogram _bucket lines are left out to keep them small, except in square-rest-1-full.txt, a whole page.
    """
    return parse(fixture("metrics/%s.txt" % name))


def pages(**names):
    modules = {"aggregator": AGGREGATOR, "rest": SQUARE_REST, "grpc": SQUARE_GRPC}
    return {modules[key]: page(name) for key, name in names.items()}


class ParserTests(unittest.TestCase):

    def test_samples_keep_their_full_names_labels_and_values(self):
        samples = parse('# HELP aggregator_fanout_seconds One request\n'
                        '# TYPE aggregator_fanout_seconds summary\n'
                        'aggregator_fanout_seconds_count{application="aggregator-service",outcome="success",'
                        'transport="rest_unary",} 70.0\n'
                        '# TYPE process_uptime_seconds gauge\n'
                        'process_uptime_seconds 12.5\n')

        self.assertEqual(samples, [
            Sample("aggregator_fanout_seconds_count",
                   {"application": "aggregator-service", "outcome": "success", "transport": "rest_unary"}, 70.0),
            Sample("process_uptime_seconds", {}, 12.5),
        ])

    def test_a_page_that_is_not_the_text_format_is_an_error(self):
        with self.assertRaisesRegex(MetricsError, "not a Prometheus text-format page"):
            parse('ok 1\nbroken{a="1" 2\n')

    def test_total_sums_the_series_whose_labels_match(self):
        samples = parse('c{method="GET",status="200",uri="/a"} 3\n'
                        'c{method="GET",status="500",uri="/a"} 1\n'
                        'c{method="GET",status="200",uri="/b"} 7\n')

        self.assertEqual(total(samples, "c", uri="/a"), 4)
        self.assertEqual(total(samples, "c", uri="/a", status="200"), 3)
        self.assertEqual(total(samples, "c", uri="/none"), 0)
        self.assertEqual(total(samples, "other"), 0)


class RealPageTests(unittest.TestCase):

    def test_a_whole_page_with_its_histograms_parses(self):
        samples = page("square-rest-1-full")

        self.assertEqual(len(samples), 338)
        self.assertEqual(total(samples, "http_server_requests_seconds_count", uri="/rest/square/unary/{number}"), 504)
        self.assertEqual(total(samples, "http_server_requests_seconds_bucket", uri="/rest/square/unary/{number}",
                               le="+Inf"), 504)
        self.assertEqual({s.labels.get("application") for s in samples}, {"square-rest-service"})

    def test_rest_unary_deltas(self):
        side = server_metrics.server_side(paths.ALL["rest/unary"],
                                          pages(aggregator="aggregator-0", rest="square-rest-0"),
                                          pages(aggregator="aggregator-1", rest="square-rest-1"))

        # 20 requests x n = 25: every square served by square-rest-service came from its own call.
        self.assertEqual(side, {"aggregator_requests": 20, "aggregator_ms_per_request": 151.93,
                                "downstream_calls": 500, "client_us_per_call": 75551.446,
                                "square_service": SQUARE_REST, "square_calls": 500, "square_us_per_call": 6008.278})

    def test_grpc_unary_deltas(self):
        side = server_metrics.server_side(paths.ALL["grpc/unary"],
                                          pages(aggregator="aggregator-1", grpc="square-grpc-1"),
                                          pages(aggregator="aggregator-2", grpc="square-grpc-2"))

        self.assertEqual(side, {"aggregator_requests": 20, "aggregator_ms_per_request": 148.162,
                                "downstream_calls": 500, "client_us_per_call": 119489.268,
                                "square_service": SQUARE_GRPC, "square_calls": 500, "square_us_per_call": 42224.795})

    def test_grpc_stream_deltas_name_the_server_time_an_upper_bound(self):
        side = server_metrics.server_side(paths.ALL["grpc/stream"],
                                          pages(aggregator="aggregator-2", grpc="square-grpc-2"),
                                          pages(aggregator="aggregator-3", grpc="square-grpc-3"))

        self.assertEqual(side, {"aggregator_requests": 20, "aggregator_ms_per_request": 27.264,
                                "downstream_calls": 500, "client_us_per_call": 20092.197,
                                "square_service": SQUARE_GRPC, "square_calls": 500, "square_streams": 20,
                                "square_us_per_call": None, "square_us_per_call_upper_bound": 672.67})

    def test_the_baseline_has_no_aggregator_figures(self):
        side = server_metrics.server_side(paths.ALL["rest/square"], pages(rest="square-rest-3"),
                                          pages(rest="square-rest-4"))

        self.assertEqual(side, {"aggregator_requests": None, "aggregator_ms_per_request": None,
                                "downstream_calls": None, "client_us_per_call": None,
                                "square_service": SQUARE_REST, "square_calls": 30, "square_us_per_call": 2111.164})


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
    """What bench does around a measured run, against real pages served over HTTP on loopback."""

    @classmethod
    def setUpClass(cls):
        cls.server = support.LoopbackServer(_Pages)
        cls.base = cls.server.base

    @classmethod
    def tearDownClass(cls):
        cls.server.close()

    def test_before_and_after_the_run(self):
        _Pages.served = {
            "/agg/actuator/prometheus":
                [fixture("metrics/aggregator-2.txt")] * 3 + [fixture("metrics/aggregator-3.txt")],
            "/grpc/actuator/prometheus":
                [fixture("metrics/square-grpc-2.txt")] * 3 + [fixture("metrics/square-grpc-3.txt")],
        }
        urls = {AGGREGATOR: self.base + "/agg/actuator/prometheus",
                SQUARE_GRPC: self.base + "/grpc/actuator/prometheus"}
        path = paths.ALL["grpc/stream"]

        before, error = bench._scrape(urls, path)
        side = bench._server_side(path, urls, before, error)

        self.assertIsNone(error)
        self.assertEqual((side["aggregator_requests"], side["downstream_calls"], side["square_calls"]), (20, 500, 500))

    def test_an_unreadable_page_or_a_missing_url_gives_an_error_not_figures(self):
        _Pages.served = {"/agg/actuator/prometheus": [fixture("metrics/aggregator-1.txt")]}
        path = paths.ALL["grpc/unary"]
        missing = {AGGREGATOR: self.base + "/agg/actuator/prometheus", SQUARE_GRPC: self.base + "/nothing"}

        before, error = bench._scrape(missing, path)
        self.assertIsNone(before)
        self.assertRegex(bench._server_side(path, missing, before, error)["error"],
                         r"^no server-side figures: cannot read http://127\.0\.0\.1:\d+/nothing: ")
        self.assertEqual(bench._scrape({AGGREGATOR: self.base}, path),
                         (None, "no metrics URL for square-grpc-service"))


    def test_after_a_warm_up_the_measured_run_waits_until_the_aggregator_holds_no_request(self):
        busy = "# TYPE aggregator_admission_squares gauge\naggregator_admission_squares{application=\"a\"} 3000.0\n"
        _Pages.served = {"/agg/actuator/prometheus": [busy, busy, busy.replace("3000.0", "0.0")]}
        service = bench.Service(AGGREGATOR, [1], self.base, [self.base + "/agg/actuator/prometheus"])
        pauses, said = [], []

        bench._await_idle(paths.ALL["grpc/unary"], [service], 10, said.append, sleep=pauses.append)

        self.assertEqual(len(pauses), 2)
        self.assertEqual(said, [])
        _Pages.served = {"/agg/actuator/prometheus": [busy]}
        bench._await_idle(paths.ALL["grpc/unary"], [service], 0.5, said.append, sleep=lambda s: time.sleep(0.1))
        self.assertEqual(said, ["  warning: the aggregator still held requests of the warm-up after 0.5 s"])


class SettleTests(unittest.TestCase):

    def test_scrapes_again_until_the_last_calls_are_recorded(self):
        path = paths.ALL["rest/square"]
        page = 'http_server_requests_seconds_count{method="GET",uri="/rest/square/unary/{number}"} %d\n' \
               'http_server_requests_seconds_sum{method="GET",uri="/rest/square/unary/{number}"} %f\n'
        before = {paths.SQUARE_REST: parse(page % (10, 1.0))}
        # The last call's metrics land a moment after ab got its answer.
        pages = iter([page % (59, 1.5), page % (60, 1.5), page % (60, 1.5)])

        after, record = server_metrics.settle(path, before, lambda: {paths.SQUARE_REST: parse(next(pages))},
                                              sleep=lambda _: None)

        self.assertEqual(record["square_calls"], 50)
        self.assertEqual(record["square_us_per_call"], 10000.0)
        self.assertIsNone(record["aggregator_requests"])


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

        self.assertEqual(found, [
            "rest/unary n=1000 c=100: square-rest-service served 1000001 square calls, "
            "expected 1000000 (1000 requests x 1000)",
            "grpc/unary n=1000 c=100: the aggregator counted 199 successful requests, ab completed 200",
            "grpc/stream n=1000 c=100: the aggregator made 199995 downstream calls, "
            "expected 200000 (200 requests x n=1000)",
        ])

    def test_missing_or_unreadable_figures_fail(self):
        data = sample_results()
        del data["runs"][0]["server_side"]
        data["runs"][1]["server_side"] = {"error": "no server-side figures: cannot read http://127.0.0.1:1/x: refused"}

        found = check_results.problems(data)

        self.assertIn("rest/unary n=1000 c=100: no server-side figures (server_side is missing)", found)
        self.assertIn("grpc/unary n=1000 c=100: no server-side figures: cannot read http://127.0.0.1:1/x: refused",
                      found)

    def test_with_failed_requests_the_count_check_is_skipped_and_says_so(self):
        data = sample_results()
        data["runs"][0]["failed"] = 2
        data["runs"][0]["server_side"]["square_calls"] = 7

        found = check_results.problems(data)

        self.assertEqual(found, ["rest/unary n=1000 c=100: 2 failed requests"])
        self.assertEqual(check_results.notes(data), [
            "rest/unary n=1000 c=100: server-side count check skipped: 2 failed and 0 non-2xx requests: "
            "square calls not compared with requests x n"])

    def test_the_baseline_path_compares_square_calls_with_requests(self):
        data = sample_results()
        run = copy.deepcopy(data["runs"][0])
        run.update(path="rest/square", services=[paths.SQUARE_REST])
        run["server_side"] = {"aggregator_requests": None, "aggregator_ms_per_request": None,
                              "downstream_calls": None, "client_us_per_call": None,
                              "square_service": paths.SQUARE_REST, "square_calls": 1000, "square_us_per_call": 30.0}
        self.assertEqual(check_results.run_problems(run), [])
        run["server_side"]["square_calls"] = 1001
        self.assertEqual(check_results.run_problems(run), [
            "square-rest-service served 1001 square calls, expected 1000 (1000 requests x 1)"])


if __name__ == "__main__":
    unittest.main()
