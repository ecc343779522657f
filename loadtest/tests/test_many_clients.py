"""The many-clients command's pure parts: the aggregator's counters and a row's figures from them, goodput against the
best lower client count, the checks, ab's failures, the table, the health probe against a real HTTP server, the
open-files limit and the command's options."""

import contextlib
import http.server
import io
import json
import os
import subprocess
import tempfile
import threading
import time
import unittest

from lab.core import catalogue, metrics
from lab.experiments import clients_figures, many_clients
from lab.experiments.clients_figures import Counts, Limits, Run
from lab.load import health_probe
from lab.load.health_probe import Check

from tests.support import FIXTURES, fixture

REST_UNARY = catalogue.ALL["rest/unary"]
LIMITS = Limits(goodput_share=0.7, health_limit_ms=1000)


def metrics_page(ok, shed, other=None, elsewhere=None, admission_shed=0.0):
    """An aggregator's /actuator/prometheus, with http_server_requests written as Spring writes it: rest/unary's URI
    by status, its health and metrics URIs (which must not count) and, for a request refused before it was matched,
    the UNKNOWN URI; admission sheds on rest_unary and, ten times as many, on grpc_unary (which must not count)."""

    def line(uri, status, count):
        outcome = {"2": "SUCCESS", "4": "CLIENT_ERROR", "5": "SERVER_ERROR"}[status[0]]
        return (
            'http_server_requests_seconds_count{application="aggregator-service",error="none",exception="none",'
            'method="GET",outcome="%s",status="%s",uri="%s"} %s' % (outcome, status, uri, float(count))
        )

    lines = [
        "# HELP http_server_requests_seconds",
        "# TYPE http_server_requests_seconds summary",
        line("/rest/unary/{n}", "200", ok),
        line("/rest/unary/{n}", "503", shed),
        line("/actuator/health", "200", 1000),
        line("/actuator/prometheus", "200", 50),
    ]
    lines += [line("/rest/unary/{n}", status, count) for status, count in (other or {}).items()]
    lines += [line("UNKNOWN", status, count) for status, count in (elsewhere or {}).items()]
    lines += [
        "# HELP aggregator_admission_shed_total Requests shed",
        "# TYPE aggregator_admission_shed_total counter",
        'aggregator_admission_shed_total{application="aggregator-service",transport="rest_unary"} %s'
        % float(admission_shed),
        'aggregator_admission_shed_total{application="aggregator-service",transport="grpc_unary"} %s'
        % float(10 * admission_shed + 7),
    ]
    return metrics.parse("\n".join(lines) + "\n")


class CountsTest(unittest.TestCase):
    def test_the_paths_statuses_its_sheds_and_what_was_refused_elsewhere_not_the_actuator(self):
        found = clients_figures.counts(metrics_page(120, 30, {"500": 2}, {"503": 4}, admission_shed=30), REST_UNARY)
        self.assertEqual({"200": 120.0, "503": 30.0, "500": 2.0}, found.statuses)
        self.assertEqual({"503": 4.0}, found.elsewhere)
        self.assertEqual(30.0, found.admission_shed)
        self.assertEqual(156.0, found.answered())

    def test_a_delta_leaves_out_what_did_not_change(self):
        before = clients_figures.counts(metrics_page(100, 30, admission_shed=30), REST_UNARY)
        after = clients_figures.counts(metrics_page(400, 30, {"500": 1}, admission_shed=30), REST_UNARY)
        self.assertEqual(Counts({"200": 300.0, "500": 1.0}, {}, 0.0), after.minus(before))

    def test_the_work_held_counts_squares_requests_and_calls_not_maxima_rates_or_waits(self):
        idle = metrics.parse(
            'aggregator_admission_squares{transport="all"} 0.0\n'
            "aggregator_admission_max_squares 131072.0\n"
            "aggregator_admission_requests 0.0\n"
            'aggregator_admission_deadline_rate{transport="rest_unary"} 5123.0\n'
            'aggregator_admission_deadline_rate{transport="grpc_unary"} NaN\n'
            'aggregator_admission_deadline_max_wait_seconds{transport="rest_unary"} 15.0\n'
            'aggregator_downstream_inflight{transport="rest_unary"} 0.0\n'
        )
        self.assertEqual(0, clients_figures.work_held(idle))
        busy = metrics.parse(
            'aggregator_admission_deadline_squares{transport="rest_unary"} 12.0\n'
            "aggregator_admission_requests 3.0\n"
            'aggregator_downstream_inflight{transport="rest_unary"} 8.0\n'
        )
        self.assertEqual(23.0, clients_figures.work_held(busy))


def health(max_ms=40.0, over=0, failures=0, checks=80):
    return {
        "url": "http://127.0.0.1:8080/actuator/health",
        "checks": checks,
        "failures": failures,
        "failure_reasons": {"HTTP 503": {"count": failures, "first_s": 2.5}} if failures else {},
        "max_ms": max_ms,
        "p99_ms": max_ms / 2,
        "over_limit": over,
        "limit_ms": 1000,
    }


def ab(errors=None, error=None, wrong=0):
    return {
        "exit_code": 1 if error else 0,
        "error": error,
        "completed": 1000,
        "non2xx": 0,
        "rps": 50.0,
        "seconds": 20.0,
        "length_failures": wrong,
        "wrong_bodies": wrong,
        "errors": errors or {},
    }


def made(path="rest/unary", n=1, clients=100, goodput=1000.0, **changed):
    found = {
        "path": path,
        "n": n,
        "clients": clients,
        "seconds": 20.0,
        "goodput": goodput,
        "shed_per_s": 0.0,
        "statuses": {"200": int(goodput * 20)},
        "statuses_elsewhere": {},
        "other": {},
        "admission_shed": 0,
        "ab": ab(),
        "health": health(),
        "main_health": None,
        "peak_rss_mib": {"aggregator-service": 301.4, "square-rest-service": 210.0},
        "out_of_memory": [],
    }
    found.update(changed)
    return found


class RowTest(unittest.TestCase):
    def test_goodput_is_the_200s_until_ab_exited_and_the_statuses_those_once_settled(self):
        before = Counts({"200": 50.0, "503": 5.0}, {}, 5.0)
        at_end = Counts({"200": 2050.0, "503": 805.0}, {}, 805.0)
        settled = Counts({"200": 2150.0, "503": 905.0, "500": 3.0}, {"503": 10.0, "400": 1.0}, 905.0)
        row = clients_figures.row(
            REST_UNARY,
            1,
            1000,
            Run(before, at_end, settled, 20.0),
            ab(),
            health(),
            None,
            {"aggregator-service": 300.0},
            [],
        )
        self.assertEqual(100.0, row["goodput"])
        # 900 sheds on the path and 10 refused before it was matched, over the same 20 s.
        self.assertEqual(45.5, row["shed_per_s"])
        self.assertEqual({"200": 2100, "500": 3, "503": 900}, row["statuses"])
        self.assertEqual({"400": 1, "503": 10}, row["statuses_elsewhere"])
        self.assertEqual({"400": 1, "500": 3}, row["other"])
        self.assertEqual(900, row["admission_shed"])


class CompareLowerTest(unittest.TestCase):
    def test_each_row_against_the_best_of_the_lower_counts_of_its_path_and_n(self):
        rows = [
            made(clients=100, goodput=800.0),
            made(clients=1000, goodput=1000.0),
            made(clients=5000, goodput=650.0),
            made(n=100, clients=100, goodput=90.0),
            made(path="grpc/unary", clients=100, goodput=2000.0),
            made(path="grpc/unary", clients=1000, goodput=1500.0),
        ]
        clients_figures.compare_lower(rows)
        self.assertEqual([None, 125.0, 65.0, None, None, 75.0], [r["goodput_vs_best_lower"] for r in rows])
        self.assertEqual([None, 800.0, 1000.0, None, None, 2000.0], [r["best_lower"] for r in rows])

    def test_no_ratio_against_a_lower_count_that_got_nothing(self):
        rows = [made(clients=20, goodput=0.0), made(clients=300, goodput=50.0)]
        clients_figures.compare_lower(rows)
        self.assertIsNone(rows[1]["goodput_vs_best_lower"])


class ChecksTest(unittest.TestCase):
    def checked(self, rows, stopped=None, limits=LIMITS):
        clients_figures.compare_lower(rows)
        return clients_figures.checks(rows, limits, stopped)

    def test_a_clean_run_passes_every_check(self):
        found = self.checked([made(clients=100), made(clients=1000, goodput=700.0)])
        self.assertEqual(
            {"alive_no_out_of_memory": [], "health_within_limit": [], "only_200_or_503": [], "goodput_holds": []}, found
        )

    def test_goodput_below_the_share_of_the_best_lower_fails_and_a_lenient_share_lets_it_pass(self):
        rows = [made(clients=100), made(clients=1000, goodput=699.0)]
        self.assertEqual(
            ["rest/unary n=1, 1000 clients: goodput 699.0/s is 70 % of the best lower count's 1000.0/s (below 70 %)"],
            self.checked(rows)["goodput_holds"],
        )
        self.assertEqual([], self.checked(rows, limits=Limits(0.2, 1000))["goodput_holds"])

    def test_no_200_at_all_fails_even_at_the_lowest_count(self):
        self.assertEqual(
            ["rest/unary n=1, 100 clients: no 200 at all"], self.checked([made(goodput=0.0)])["goodput_holds"]
        )

    def test_a_slow_or_failed_health_check_fails(self):
        found = self.checked(
            [made(health=health(max_ms=1480.0, over=2)), made(clients=1000, health=health(failures=3))]
        )["health_within_limit"]
        self.assertEqual(
            [
                "rest/unary n=1, 100 clients: health at http://127.0.0.1:8080/actuator/health took up to "
                "1480 ms, 2 of 80 checks over 1000 ms",
                "rest/unary n=1, 1000 clients: health at http://127.0.0.1:8080/actuator/health took up to "
                "40 ms, 0 of 80 checks over 1000 ms, 3 failed: HTTP 503 (3, first at 2.5 s)",
            ],
            found,
        )

    def test_another_status_a_wrong_body_or_an_ab_that_gave_up_fails(self):
        found = self.checked(
            [
                made(other={"500": 3}),
                made(clients=1000, ab=ab(wrong=2)),
                made(
                    clients=5000,
                    ab=ab(error="exited with code 1: apr_pollset_poll: The timeout specified has expired (70007)"),
                ),
            ]
        )["only_200_or_503"]
        self.assertEqual(
            [
                "rest/unary n=1, 100 clients: answers other than 200 or 503: 500 3",
                "rest/unary n=1, 1000 clients: 2 answers of 200 with a body of the wrong length",
                "rest/unary n=1, 5000 clients: ab: exited with code 1: apr_pollset_poll: The timeout "
                "specified has expired (70007)",
            ],
            found,
        )

    def test_a_service_gone_or_out_of_memory_fails(self):
        found = self.checked(
            [made(out_of_memory=["aggregator-service"])],
            stopped="aggregator-service exited (exit code 3) during rest/unary n=1 with 5000 clients"
            "\n[lab] its log: logs/aggregator-service.log\n  Terminating due to "
            "java.lang.OutOfMemoryError: Java heap space",
        )
        self.assertEqual(
            [
                "aggregator-service exited (exit code 3) during rest/unary n=1 with 5000 clients",
                "rest/unary n=1, 100 clients: aggregator-service's log has an OutOfMemoryError",
            ],
            found["alive_no_out_of_memory"],
        )


class AbFiguresTest(unittest.TestCase):
    def test_sheds_beside_a_first_200_are_length_failures_not_errors_or_wrong_bodies(self):
        # A real run: ab -t 4 -c 300 on rest/unary n=1 with a small admission budget.
        report = clients_figures.ab_output.parse_report(fixture("ab-clients-shed.txt"))
        found = clients_figures.ab_figures(report, 0, None, len(REST_UNARY.expected_body(1)))
        self.assertEqual(
            {
                "exit_code": 0,
                "error": None,
                "completed": 9441,
                "non2xx": 6061,
                "rps": 2360.04,
                "seconds": 4.0,
                "length_failures": 6061,
                "wrong_bodies": 0,
                "errors": {},
            },
            found,
        )

    def test_receive_and_exception_failures_are_ab_errors(self):
        report = clients_figures.ab_output.parse_report(fixture("ab-failed-refused.txt"))
        found = clients_figures.ab_figures(report, 0, None, 9)
        self.assertEqual({"receive": 50, "exceptions": 25}, found["errors"])
        # Its first answer was not the expected body's length: wrong bodies cannot be told.
        self.assertIsNone(found["wrong_bodies"])

    def test_an_ab_that_exited_without_a_report_is_an_error(self):
        done = subprocess.CompletedProcess(
            ["ab"],
            1,
            stdout="Benchmarking 127.0.0.1 (be patient)\n",
            stderr="apr_pollset_poll: The timeout specified has expired (70007)\n",
        )
        found = many_clients.ab_result(done, 9)
        self.assertEqual(
            "exited with code 1: apr_pollset_poll: The timeout specified has expired (70007)", found["error"]
        )
        self.assertIsNone(found["completed"])


class TableTest(unittest.TestCase):
    def test_a_row_per_run_with_the_verdict_of_its_goodput(self):
        rows = [
            made(clients=100),
            made(
                clients=1000,
                goodput=650.0,
                shed_per_s=812.35,
                other={"500": 2},
                ab=ab(errors={"connect": 3}),
                health=health(max_ms=1203.0, over=1),
            ),
        ]
        clients_figures.compare_lower(rows)
        self.assertEqual(
            "| path | n | clients | goodput/s | shed/s | other | ab errors | health max ms | health p99 ms | "
            "health > 1 s | aggregator peak RSS MiB | goodput vs best lower |\n"
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n"
            "| rest/unary | 1 | 100 | 1000.0 | 0.0 | 0 | 0 | 40 | 20 | 0 | 301 | – |\n"
            "| rest/unary | 1 | 1000 | 650.0 | 812.4 | 500 2 | connect 3 | 1203 | 602 | 1 | 301 | 65 % FAIL |\n",
            clients_figures.table(rows, LIMITS),
        )

    def test_the_main_ports_health_beside_the_health_url_given(self):
        rows = [made(main_health=health(max_ms=2500.0, over=4), ab=ab(error="exited with code 1"))]
        clients_figures.compare_lower(rows)
        lines = clients_figures.table(rows, LIMITS).splitlines()
        self.assertIn("| health > 1 s | main-port health max ms | main-port p99 ms | main-port > 1 s |", lines[0])
        self.assertEqual(
            "| rest/unary | 1 | 100 | 1000.0 | 0.0 | 0 | ab failed | 40 | 20 | 0 | 2500 | 1250 | 4 | 301 | – |",
            lines[2],
        )


class HealthProbeTest(unittest.TestCase):
    """Against a real HTTP server on a free port: UP at once, slow, then 503."""

    def setUp(self):
        self.answers = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(handler):  # noqa: N805 - the handler's self; self is the test
                delay, status, body = self.answers.pop(0) if self.answers else (0, 200, b'{"status":"UP"}')
                time.sleep(delay)
                handler.send_response(status)
                handler.send_header("Content-Type", "application/json")
                handler.send_header("Content-Length", str(len(body)))
                handler.end_headers()
                handler.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = "http://127.0.0.1:%d/actuator/health" % self.server.server_port

    def tearDown(self):
        self.server.shutdown()
        self.server.server_close()

    def test_checks_every_interval_times_each_and_keeps_why_one_failed(self):
        self.answers = [
            (0, 200, b'{"status":"UP"}'),
            (0.3, 200, b'{"status" : "UP"}'),
            (0, 503, b'{"status":"DOWN"}'),
            (0, 200, b'{"status":"DOWN"}'),
        ]
        probe = health_probe.HealthProbe(self.url, interval_s=0.05).start()
        give_up = time.monotonic() + 10
        while len(probe.checks) < 5 and time.monotonic() < give_up:
            time.sleep(0.05)
        checks = probe.stop()
        self.assertGreaterEqual(len(checks), 5)
        self.assertEqual([None, None, "HTTP 503", "200 without status UP", None], [c.failure for c in checks[:5]])
        self.assertGreaterEqual(checks[1].ms, 300)
        # The slow check delayed the next; none was sent before the one before it answered.
        self.assertGreaterEqual(checks[2].sent_s, checks[1].sent_s + 0.3)
        found = health_probe.figures(self.url, checks, limit_ms=250)
        self.assertEqual(1, found["over_limit"])
        self.assertEqual(2, found["failures"])
        self.assertEqual(["HTTP 503", "200 without status UP"], list(found["failure_reasons"]))

    def test_a_port_nobody_listens_on_is_a_failure(self):
        self.server.shutdown()
        self.server.server_close()
        self.assertRegex(health_probe.check(self.url, 1.0), "^ConnectionRefusedError")

    def test_max_p99_and_over_the_limit(self):
        checks = [Check(i * 0.25, float(ms)) for i, ms in enumerate(list(range(1, 100)) + [1500])]
        found = health_probe.figures(self.url, checks, 1000)
        self.assertEqual((1500.0, 99.0, 1), (found["max_ms"], found["p99_ms"], found["over_limit"]))
        self.assertIsNone(health_probe.figures(self.url, [], 1000)["max_ms"])


class OpenFilesTest(unittest.TestCase):
    INFINITY = -1

    def test_the_soft_limit_goes_up_to_the_hard_one(self):
        self.assertEqual(20000, clients_figures.open_files_soft_limit(1024, 20000, 5100, self.INFINITY))

    def test_an_unlimited_hard_limit_gives_what_is_needed(self):
        self.assertEqual(5100, clients_figures.open_files_soft_limit(1024, self.INFINITY, 5100, self.INFINITY))
        self.assertEqual(8192, clients_figures.open_files_soft_limit(8192, self.INFINITY, 5100, self.INFINITY))

    def test_a_hard_limit_below_what_is_needed_says_how_to_raise_it(self):
        with self.assertRaises(ValueError) as raised:
            clients_figures.open_files_soft_limit(1024, 4096, 5100, self.INFINITY)
        self.assertIn("the open-files hard limit is 4096, below the 5100 this run needs", str(raised.exception))
        self.assertIn("ulimit -Hn 5100", str(raised.exception))


class OptionsTest(unittest.TestCase):
    def rejected(self, *argv):
        stderr = io.StringIO()
        with contextlib.redirect_stderr(stderr), self.assertRaises(SystemExit) as raised:
            many_clients.parse(list(argv))
        self.assertEqual(2, raised.exception.code)
        return stderr.getvalue()

    def test_the_defaults_are_the_issues_first_size(self):
        options = many_clients.parse([])
        self.assertEqual(
            (catalogue.DEFAULT.split(), [1], [100, 1000, 5000], 20, 5, 0.7),
            (
                options.path_names,
                options.n_values,
                options.client_counts,
                options.duration,
                options.warmup_seconds,
                options.goodput_share,
            ),
        )

    def test_the_second_size_and_client_counts_in_any_order(self):
        options = many_clients.parse(["--n", "100", "--clients", "2000 100 500 500"])
        self.assertEqual(([100], [100, 500, 2000]), (options.n_values, options.client_counts))

    def test_bad_options_are_refused_with_what_is_wrong(self):
        self.assertIn("--clients must be whole numbers of at least 1", self.rejected("--clients", "100 lots"))
        self.assertIn("--clients must be whole numbers of at least 1", self.rejected("--clients", "0 100"))
        self.assertIn("--n must be whole numbers", self.rejected("--n", ""))
        self.assertIn("only the aggregator's paths", self.rejected("--paths", "rest/square"))
        self.assertIn("unknown path 'rest/nope'", self.rejected("--paths", "rest/nope"))
        self.assertIn("--goodput-share must be above 0 and at most 1", self.rejected("--goodput-share", "70"))
        self.assertIn("--duration and --deadline must be at least 1", self.rejected("--duration", "0"))
        self.assertIn("--warmup-seconds must not be negative", self.rejected("--warmup-seconds", "-1"))
        self.assertIn("--health-url must be an http:// URL", self.rejected("--health-url", "localhost:8081"))
        self.assertIn("invalid int value: '2.5'", self.rejected("--duration", "2.5"))

    def test_the_aggregators_arguments_after_the_environments(self):
        options = many_clients.parse(["--aggregator-args=--aggregator.admission.max-squares=40"])
        self.assertEqual(
            "--aggregator.in-flight=4 --aggregator.admission.max-squares=40",
            many_clients.aggregator_args(options, " --aggregator.in-flight=4 "),
        )
        self.assertEqual("", many_clients.aggregator_args(many_clients.parse([]), ""))

    def test_health_is_the_main_ports_or_the_url_given_then_the_main_ports(self):
        self.assertEqual(
            ["http://127.0.0.1:8080/actuator/health"],
            many_clients.health_urls(many_clients.parse([]), "http://127.0.0.1:8080"),
        )
        given = many_clients.parse(["--health-url", "http://127.0.0.1:9000/actuator/health"])
        self.assertEqual(
            ["http://127.0.0.1:9000/actuator/health", "http://127.0.0.1:8080/actuator/health"],
            many_clients.health_urls(given, "http://127.0.0.1:8080"),
        )

    def test_the_ab_command_is_the_issues(self):
        self.assertEqual(
            [
                "ab",
                "-t",
                "20",
                "-n",
                "10000000",
                "-c",
                "5000",
                "-s",
                "60",
                "-q",
                "-r",
                "http://127.0.0.1:8080/rest/unary/1",
            ],
            many_clients.ab_command("http://127.0.0.1:8080/rest/unary/1", 5000, 20),
        )


if __name__ == "__main__":
    unittest.main()


class ClientsDocumentTests(unittest.TestCase):
    def test_clients_json_and_clients_md_come_from_the_record_with_each_check_said(self):
        with open(os.path.join(FIXTURES, "results", "clients-ci-run.json")) as handle:
            record = json.load(handle)
        with tempfile.TemporaryDirectory() as folder, contextlib.redirect_stdout(io.StringIO()):
            status = many_clients.Clients(many_clients.parse([])).write(folder, record)
            with open(os.path.join(folder, "clients.md")) as handle:
                text = handle.read()

        self.assertEqual(0, status)
        self.assertTrue(text.startswith("# Many clients\n\nab (`ab "), text[:80])
        self.assertIn("| path | n | clients | goodput/s | shed/s |", text)
        self.assertIn("*goodput/s*: the aggregator's 200 answers on the path", text)
        self.assertTrue(text.endswith("- only 200 or 503: passed\n- goodput holds: passed\n"), text[-200:])
