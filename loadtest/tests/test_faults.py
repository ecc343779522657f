import contextlib
import http.server
import io
import json
import os
import tempfile
import threading
import time
import unittest

from lab.core import catalogue, metrics
from lab.core.errors import LabError
from lab.experiments import fault_figures, faults
from lab.experiments.fault_figures import Limits, Phase
from lab.load import client as fault_load
from lab.load.client import Answer
from lab.results import results

from tests.support import FIXTURES

PROBLEM = "application/problem+json"
EXPECTED = catalogue.ALL["grpc/unary"].expected_body(3).encode()


def problem(status, detail="x"):
    return json.dumps({"type": "about:blank", "title": "t", "status": status, "detail": detail}).encode()


class ClassifyTest(unittest.TestCase):
    def test_a_200_is_ok_only_with_the_exact_body(self):
        self.assertEqual(("ok", ""), fault_load.classify(200, "application/json", EXPECTED, EXPECTED))
        self.assertEqual(
            ("wrong", "a 200 whose body is not the expected answer"),
            fault_load.classify(200, "application/json", b'[{"1":1},{"2":4}]', EXPECTED),
        )

    def test_a_503_or_504_counts_only_with_a_problem_body_that_states_it(self):
        self.assertEqual(("503", ""), fault_load.classify(503, PROBLEM, problem(503), EXPECTED))
        self.assertEqual(("504", ""), fault_load.classify(504, PROBLEM + ";charset=UTF-8", problem(504), EXPECTED))
        self.assertEqual(
            ("other", "503 without a problem body (application/json)"),
            fault_load.classify(503, "application/json", problem(503), EXPECTED),
        )
        self.assertEqual(
            ("other", "504 without a problem body (application/problem+json)"),
            fault_load.classify(504, PROBLEM, problem(503), EXPECTED),
        )
        self.assertEqual(
            ("other", "504 without a problem body (no Content-Type)"), fault_load.classify(504, None, b"", EXPECTED)
        )
        self.assertEqual(
            ("other", "503 without a problem body (application/problem+json)"),
            fault_load.classify(503, PROBLEM, b'{"status":503}', EXPECTED),
        )

    def test_another_status_says_its_problem_detail(self):
        self.assertEqual(
            ("other", "HTTP 502: the gRPC square service answered UNKNOWN"),
            fault_load.classify(502, PROBLEM, problem(502, "the gRPC square service answered UNKNOWN"), EXPECTED),
        )
        self.assertEqual(("other", "HTTP 500"), fault_load.classify(500, "text/html", b"<html>", EXPECTED))


def ten_a_second(start, end):
    return [start + i / 10 for i in range(int(round((end - start) * 10)))]


class RecoveryTest(unittest.TestCase):
    def test_seconds_until_a_window_holds_ninety_percent_of_before(self):
        # 10/s before, nothing for 2 s after the fault cleared at 10, then 10/s again: [11.9, 12.9) holds 9 of them.
        ok = ten_a_second(0, 10) + ten_a_second(12, 20)
        self.assertEqual(1.9, fault_figures.recovery_s(ok, 10.0, 10.0, horizon_s=10))

    def test_zero_when_the_first_window_after_clearing_already_holds_it(self):
        self.assertEqual(0.0, fault_figures.recovery_s(ten_a_second(0, 20), 10.0, 10.0, horizon_s=10))

    def test_eighty_percent_is_not_back(self):
        ok = [10 + i / 8 for i in range(80)]
        self.assertIsNone(fault_figures.recovery_s(ok, 10.0, 10.0, horizon_s=10))

    def test_none_when_nothing_came_back_within_the_horizon_or_there_was_nothing_before(self):
        ok = ten_a_second(0, 10) + ten_a_second(18, 25)
        self.assertIsNone(fault_figures.recovery_s(ok, 10.0, 10.0, horizon_s=5))
        self.assertIsNone(fault_figures.recovery_s(ten_a_second(0, 20), 10.0, 0.0, horizon_s=10))

    def test_a_lower_share_counts_a_partial_recovery_as_back(self):
        half = [10.0 + i * 0.2 for i in range(50)]
        self.assertIsNone(fault_figures.recovery_s(half, 10.0, 10.0, horizon_s=10))
        self.assertEqual(0.0, fault_figures.recovery_s(half, 10.0, 10.0, horizon_s=10, share=0.5))

    def test_goodput_counts_the_half_open_window(self):
        self.assertEqual(2.0, fault_figures.goodput([1.0, 1.5, 2.0], 1.0, 2.0))
        self.assertEqual(0.0, fault_figures.goodput([1.0], 2.0, 2.0))


LIMITS = Limits(deadline_s=5.0, grace_s=1.0, recovery_s=5.0)


def steady_then_fault():
    """10 ok/s on rest/unary from 0 to 10; a fault from 10 to 12 in which two requests answer 504 at 15 (one sent at
    9.9, before it) and nothing is ok; ok again from 15.5; the phase ends at 25."""
    answers = [Answer("rest/unary", t - 0.05, t, "ok") for t in ten_a_second(0, 10)]
    answers += [
        Answer("rest/unary", 9.9, 15.0, "504"),
        Answer("rest/unary", 10.5, 15.0, "504"),
        Answer("rest/unary", 11.0, 11.2, "other", "HTTP 502: channel closed"),
        Answer("grpc/unary", 1.0, 1.1, "ok"),
    ]
    answers += [Answer("rest/unary", t - 0.05, t, "ok") for t in ten_a_second(15.5, 25)]
    phases = [Phase("steady", 0.0, None, 10.0), Phase("reset", 10.0, 12.0, 25.0)]
    return phases, answers


class RowsTest(unittest.TestCase):
    def test_a_fault_row_counts_what_came_in_it_and_when_goodput_was_back(self):
        phases, answers = steady_then_fault()
        steady, fault = fault_figures.rows(phases, ["rest/unary"], answers, LIMITS)

        self.assertEqual({"ok": 100, "503": 0, "504": 0, "other": 0, "wrong": 0}, steady["answers"])
        self.assertEqual(10.0, steady["goodput_rps"])
        self.assertEqual({"ok": 95, "503": 0, "504": 2, "other": 1, "wrong": 0}, fault["answers"])
        self.assertEqual({"HTTP 502: channel closed": 1}, fault["why"])
        self.assertEqual(5.1, fault["longest_s"])
        self.assertEqual(0, fault["late"])
        # The two 504s were under way when the fault cleared at 12; the 502 had come at 11.2.
        self.assertEqual(2, fault["open_at_clear"])
        self.assertEqual(10.0, fault["goodput_before_rps"])
        self.assertEqual(0.0, fault["goodput_during_rps"])
        self.assertEqual(3.4, fault["recovered_s"])

    def test_failures_name_the_phase_the_path_and_what_was_wrong(self):
        phases, answers = steady_then_fault()
        answers.append(Answer("rest/unary", 12.0, 19.0, "504"))
        figures = fault_figures.rows(phases, ["rest/unary"], answers, Limits(5.0, 1.0, recovery_s=3.0))

        self.assertEqual(
            [
                "reset, rest/unary: 1 answers neither an exact 200 nor a 503 or 504 with a problem body "
                "(1 x HTTP 502: channel closed)",
                "reset, rest/unary: 1 answers took longer than the deadline of 5 s (+ 1 s), the longest 7.00 s",
                "reset, rest/unary: goodput took 3.4 s to come back to 90 % of before, more than 3 s",
            ],
            fault_figures.failures(figures, Limits(5.0, 1.0, recovery_s=3.0)),
        )

    def test_no_recovery_and_no_steady_goodput_are_failures(self):
        phases = [Phase("steady", 0.0, None, 10.0), Phase("blackhole", 10.0, 12.0, 20.0)]
        answers = [Answer("grpc/stream", 1.0, 1.5, "ok")] + [
            Answer("grpc/stream", t - 0.1, t, "ok") for t in ten_a_second(7, 10)
        ]
        self.assertEqual(
            ["blackhole, grpc/stream: goodput never came back to 90 % of its 10.0/s before the fault"],
            fault_figures.failures(fault_figures.rows(phases, ["grpc/stream"], answers, LIMITS), LIMITS),
        )
        self.assertEqual(
            ["steady, rest/h2c: no correct answer before any fault, so nothing to recover to"],
            fault_figures.failures(fault_figures.rows(phases[:1], ["rest/h2c"], answers, LIMITS), LIMITS),
        )

    def test_the_table_has_a_row_per_phase_and_path(self):
        phases, answers = steady_then_fault()
        text = results.markdown(fault_figures.table(fault_figures.rows(phases, ["rest/unary"], answers, LIMITS)))
        self.assertEqual(
            "| fault | path | 200 exact | 503 | 504 | other | wrong body | longest (s) | open at clear | "
            "goodput before (/s) | during (/s) | back to 90 % after (s) |\n"
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n"
            "| steady | rest/unary | 100 | 0 | 0 | 0 | 0 | 0.05 | - | 10.0 | - | - |\n"
            "| reset | rest/unary | 95 | 0 | 2 | 1 | 0 | 5.10 | 2 | 10.0 | 0.0 | 3.4 |\n",
            text,
        )


class _Aggregator(http.server.BaseHTTPRequestHandler):
    """Answers /grpc/unary/3 in turn exactly, with a 503 problem, a 502 problem and a wrong body."""

    protocol_version = "HTTP/1.1"
    count = 0
    lock = threading.Lock()

    def do_GET(self):
        with _Aggregator.lock:
            _Aggregator.count += 1
            turn = _Aggregator.count % 4
        status, kind, body = [
            (200, "application/json", EXPECTED),
            (503, PROBLEM, problem(503)),
            (502, PROBLEM, problem(502, "bad")),
            (200, "application/json", b"[]"),
        ][turn]
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


class LoadTest(unittest.TestCase):
    def load_for_a_second(self, rate: float = 0.0) -> fault_load.Load:
        """2 clients on grpc/unary against a real local server for a second; every one of them stopped in time."""
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Aggregator)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            load = fault_load.Load(
                "http://127.0.0.1:%d" % server.server_port, ["grpc/unary"], 3, 2, timeout_s=5, rate=rate
            )
            load.start()
            time.sleep(1.0)
            self.assertEqual([], load.stop())
        finally:
            server.shutdown()
            server.server_close()
        return load

    def test_clients_record_every_answer_by_kind_against_a_real_server(self):
        load = self.load_for_a_second()
        kinds = {answer.kind for answer in load.answers}
        self.assertEqual({"ok", "503", "other", "wrong"}, kinds)
        self.assertTrue(all(a.path == "grpc/unary" and a.answered >= a.sent for a in load.answers))
        self.assertIn("HTTP 502: bad", {a.detail for a in load.answers})

    def test_paced_clients_send_their_rate_together_whatever_the_answers_allow(self):
        # 20 a second on the path, shared by 2 clients: one every 100 ms each, their turns 50 ms apart.
        load = self.load_for_a_second(rate=20)
        # A closed loop against this server sends hundreds a second; paced, 20 (21 with the turn at 0).
        self.assertIn(len(load.answers), range(18, 23))
        # No bursts: any 300 ms holds its 6 turns, give or take one a client, even when a busy machine delays one.
        sent = sorted(answer.sent for answer in load.answers)
        busiest = max(sum(1 for other in sent if start <= other < start + 0.3) for start in sent)
        self.assertLessEqual(busiest, 8)


class CommandTest(unittest.TestCase):
    def test_each_fault_is_its_toxic_on_every_direction_it_needs(self):
        self.assertEqual(
            [
                {
                    "name": "reset_upstream",
                    "type": "reset_peer",
                    "stream": "upstream",
                    "toxicity": 1.0,
                    "attributes": {"timeout": 0},
                },
                {
                    "name": "reset_downstream",
                    "type": "reset_peer",
                    "stream": "downstream",
                    "toxicity": 1.0,
                    "attributes": {"timeout": 0},
                },
            ],
            faults.toxics(faults.FAULTS["reset"], 2000, 1),
        )
        self.assertEqual(
            [
                {
                    "name": "latency_downstream",
                    "type": "latency",
                    "stream": "downstream",
                    "toxicity": 1.0,
                    "attributes": {"latency": 2000},
                }
            ],
            faults.toxics(faults.FAULTS["latency"], 2000, 1),
        )
        self.assertEqual(
            [{"timeout": 0}] * 2, [t["attributes"] for t in faults.toxics(faults.FAULTS["blackhole"], 2000, 1)]
        )
        self.assertEqual(
            [{"rate": 3}] * 2, [t["attributes"] for t in faults.toxics(faults.FAULTS["bandwidth"], 2000, 3)]
        )

    def test_options_that_cannot_measure_are_refused_with_a_reason(self):
        for argv, reason in (
            (["--faults", "flood"], "unknown fault flood"),
            (["--paths", "rest/square"], "only the aggregator's paths"),
            (["--settle-seconds", "3"], "at least --recovery-limit + 1"),
            (["--clients", "0"], "--clients must be at least 1"),
            (["--rate", "-1"], "--rate must not be negative"),
        ):
            with self.subTest(argv=argv):
                err = io.StringIO()
                with self.assertRaises(SystemExit), contextlib.redirect_stderr(err):
                    faults.Faults.parse(argv)
                self.assertIn(reason, err.getvalue())
        self.assertEqual(catalogue.DEFAULT.split(), faults.Faults.parse([]).path_names)

    def test_the_work_gauges_add_up_and_leave_out_the_budget_maximum(self):
        page = metrics.parse(
            "# TYPE aggregator_admission_squares gauge\naggregator_admission_squares 40.0\n"
            "# TYPE aggregator_admission_max_squares gauge\naggregator_admission_max_squares 131072.0\n"
            "# TYPE aggregator_downstream_inflight gauge\n"
            'aggregator_downstream_inflight{transport="grpc_unary"} 3.0\n'
            'aggregator_downstream_inflight{transport="rest_unary"} 2.0\n'
        )
        self.assertEqual(
            {"aggregator_admission_squares": 40.0, "aggregator_downstream_inflight": 5.0}, faults.work_gauges(page)
        )
        with self.assertRaises(LabError):
            faults.work_gauges(page[:2])

    def test_an_idle_aggregator_holds_no_work_whatever_its_rates_and_waits_say(self):
        idle = metrics.parse(
            "aggregator_admission_squares 0.0\n"
            "aggregator_admission_requests 0.0\n"
            'aggregator_admission_deadline_squares{transport="rest_unary"} 0.0\n'
            'aggregator_admission_deadline_rate{transport="rest_unary"} 5123.0\n'
            'aggregator_admission_deadline_rate{transport="grpc_unary"} NaN\n'
            'aggregator_admission_deadline_max_wait_seconds{transport="rest_unary"} 15.0\n'
            'aggregator_downstream_inflight{transport="rest_unary"} 0.0\n'
        )
        gauges = faults.work_gauges(idle)
        self.assertEqual(
            {
                "aggregator_admission_squares": 0.0,
                "aggregator_admission_requests": 0.0,
                "aggregator_admission_deadline_squares": 0.0,
                "aggregator_downstream_inflight": 0.0,
            },
            gauges,
        )
        self.assertFalse(any(gauges.values()))

    def test_a_request_admitted_and_not_answered_is_work_held(self):
        page = metrics.parse(
            "aggregator_admission_squares 0.0\naggregator_admission_requests 2.0\n"
            'aggregator_downstream_inflight{transport="rest_unary"} 0.0\n'
        )
        self.assertEqual(2.0, faults.work_gauges(page)["aggregator_admission_requests"])

    def test_rates_and_waits_alone_are_not_admission_gauges_of_work(self):
        page = metrics.parse(
            'aggregator_admission_deadline_rate{transport="rest_unary"} NaN\n'
            'aggregator_admission_deadline_max_wait_seconds{transport="rest_unary"} 15.0\n'
            'aggregator_downstream_inflight{transport="rest_unary"} 0.0\n'
        )
        with self.assertRaisesRegex(LabError, "none of aggregator_admission_squares"):
            faults.work_gauges(page)


if __name__ == "__main__":
    unittest.main()


class FaultDocumentTests(unittest.TestCase):
    def test_faults_json_and_faults_md_come_from_the_record_with_each_promise_said(self):
        with open(os.path.join(FIXTURES, "results", "faults-ci-run.json")) as handle:
            record = json.load(handle)
        record["after"]["gauges"]["values"]["aggregator_admission_squares"] = 3.0
        with tempfile.TemporaryDirectory() as folder, contextlib.redirect_stdout(
            io.StringIO()
        ), contextlib.redirect_stderr(io.StringIO()) as errors:
            status = faults.Faults(faults.Faults.parse([])).write(folder, record)
            with open(os.path.join(folder, "faults.md")) as handle:
                text = handle.read()
            kept = json.load(open(os.path.join(folder, "faults.json")))

        self.assertEqual(1, status)
        self.assertTrue(text.startswith("# Network faults under load\n\n2 clients on each of rest/unary, rest/h2c"))
        self.assertIn("| steady | rest/unary | 60 | 0 | 0 | 0 | 0 | 0.05 | - | 10.0 | - | - |", text)
        self.assertIn(
            "- nothing leaks: FAILED\n  - after the load stopped, aggregator_admission_squares stayed at 3.0", text
        )
        self.assertEqual((False, False), (kept["passed"], kept["checks"]["nothing_leaks"]["passed"]))
        self.assertIn("the faults run broke a promise", errors.getvalue())
