"""The open loop: Vegeta's results read into counts and coordinated-omission-corrected latencies (on hand-made lines in
the format of `vegeta encode --to json`), and real Vegeta runs against small Python servers on 127.0.0.1."""

import http.server
import os
import tempfile
import threading
import time
import unittest

from lab.core import records
from lab.core.errors import VegetaOutputError
from lab.host import tools
from lab.load import open_loop
from lab.results import check_results, report, view

from tests import support

URL = support.VEGETA_URL
BODY = support.VEGETA_BODY
result_line = support.vegeta_line


class ReadResultsTests(unittest.TestCase):
    def test_counts_every_kind_of_answer_and_error(self):
        # At 10 requests a second, each on time and answered in 1 ms.
        answers = [
            (200, BODY, ""),
            (200, BODY, ""),
            (200, BODY, ""),
            (200, "[]", ""),
            (200, "", ""),
            (503, "{}", ""),
            (503, "{}", ""),
            (404, "no", ""),
            (500, "{}", ""),
            (204, "", ""),
            (0, None, 'Get "%s": context deadline exceeded (Client.Timeout exceeded while awaiting headers)' % URL),
            (0, None, 'Get "%s": dial tcp 0.0.0.0:0->127.0.0.1:8080: connect: connection refused' % URL),
            (0, None, 'Get "%s": EOF' % URL),
            (0, None, 'Get "%s": read tcp 127.0.0.1:4242->127.0.0.1:8080: read: connection reset by peer' % URL),
            (0, None, 'Get "http://nowhere.invalid/": dial tcp: lookup nowhere.invalid: no such host'),
        ]
        lines = [
            result_line(seq, seq * 100_000, 1000, code, body, error) for seq, (code, body, error) in enumerate(answers)
        ]

        record = open_loop.read_results(lines, BODY, rate=10, duration_s=1.4)

        self.assertEqual(
            record["errors"],
            {
                "wrong_answer": 2,
                "shed_503": 2,
                "http_404": 1,
                "http_500": 1,
                "http_204": 1,
                "timeout": 1,
                "connection": 3,
                "other": 1,
            },
        )
        self.assertEqual((record["sent"], record["completed"], record["ok"]), (15, 10, 3))
        # Failed: 5 transport errors, 2 wrong answers and the 204, a 2xx that is not the 200 promised; non-2xx: the
        # 503s, the 404 and the 500.
        self.assertEqual((record["failed"], record["non2xx"]), (8, 4))
        self.assertEqual((record["rps"], record["sent_rate"]), (2.14, 10.71))
        self.assertEqual(record["verified"], {"check": "exact body", "expected_bytes": 25, "checked": 5, "passed": 3})
        self.assertEqual((record["load"], record["rate"], record["duration_s"]), ("open", 10, 1.4))
        self.assertEqual(record["max_schedule_lag_ms"], 0.0)

    def test_latencies_are_of_ok_answers_only_at_the_histograms_exact_percentiles(self):
        # 10 ok answers of 100 .. 1000 µs, and a fast 503 and a fast wrong answer that must not count.
        lines = [result_line(seq, seq * 100_000, (seq + 1) * 100) for seq in range(10)]
        lines += [result_line(10, 1_000_000, 7, code=503, body="{}"), result_line(11, 1_100_000, 5, body="[]"), ""]

        record = open_loop.read_results(lines, BODY, rate=10, duration_s=1.2)

        # Of 10 values the 50th percentile is the 5th, the 90th the 9th, the 99th and 99.9th the 10th; below 2048 µs
        # the histogram keeps every µs.
        expected = {"mean": 0.55, "p50": 0.5, "p90": 0.9, "p99": 1.0, "p99_9": 1.0, "max": 1.0}
        self.assertEqual(record["latency_ms"], expected)
        self.assertEqual(record["latency_uncorrected_ms"], expected)
        self.assertEqual((record["ok"], record["errors"]), (10, {"shed_503": 1, "wrong_answer": 1}))

    def test_a_stalled_generator_s_lag_is_added_to_the_corrected_latency_only(self):
        # 10 requests a second: request k is due k * 100 ms after the first on-time one. Request 0 left 2 ms late;
        # then the generator stalled: requests 3 and 4, due at 300 and 400 ms, left at 500 ms with request 5.
        sends_us = [2_000, 100_000, 200_000, 500_000, 500_010, 500_020, 600_000, 700_000, 800_000, 900_000]
        latencies_us = [301, 400, 200, 63, 21, 500, 700, 800, 900, 1085]
        lines = [result_line(seq, sent, latency) for seq, (sent, latency) in enumerate(zip(sends_us, latencies_us))]

        record = open_loop.read_results(lines, BODY, rate=10, duration_s=1.0)

        # Corrected, lag + latency: 2000 + 301, 400, 200, 200000 + 63, 100010 + 21, 20 + 500, 700, 800, 900, 1085 µs.
        # Their sorted 5th is 800, 9th 100031 and 10th 200063 (both kept exactly: the histogram's unit there is 64
        # and 128 µs, and these are the top of their units); the mean is 307000 / 10 µs.
        self.assertEqual(
            record["latency_ms"],
            {"mean": 30.7, "p50": 0.8, "p90": 100.031, "p99": 200.063, "p99_9": 200.063, "max": 200.063},
        )
        # Uncorrected, Vegeta's own: the stall does not show at all.
        self.assertEqual(
            record["latency_uncorrected_ms"],
            {"mean": 0.497, "p50": 0.4, "p90": 0.9, "p99": 1.085, "p99_9": 1.085, "max": 1.085},
        )
        self.assertEqual(record["max_schedule_lag_ms"], 200.0)

    def test_no_ok_answer_leaves_no_latency(self):
        lines = [
            result_line(0, 0, 30, code=503, body="{}"),
            result_line(1, 20_000, 400, code=0, error='Get "%s": EOF' % URL),
        ]

        record = open_loop.read_results(lines, BODY, rate=50, duration_s=0.04)

        none = dict.fromkeys(("mean", "p50", "p90", "p99", "p99_9", "max"))
        self.assertEqual((record["latency_ms"], record["latency_uncorrected_ms"]), (none, none))
        self.assertEqual((record["ok"], record["rps"], record["failed"], record["non2xx"]), (0, 0.0, 1, 1))

    def test_no_result_at_all(self):
        record = open_loop.read_results([], BODY, rate=50, duration_s=1.0)

        self.assertEqual((record["sent"], record["errors"], record["max_schedule_lag_ms"]), (0, {}, None))

    def test_a_line_that_is_not_a_result_is_an_error(self):
        with self.assertRaisesRegex(VegetaOutputError, "result 2"):
            open_loop.read_results([result_line(0, 0, 10), '{"seq": 1}'], BODY, rate=1, duration_s=1.0)


class PiecesTests(unittest.TestCase):
    def test_timestamps_keep_nanoseconds_and_their_zone(self):
        self.assertEqual(open_loop.timestamp_ns("2026-11-23T12:37:04.349344165Z"), 1795437424349344165)
        self.assertEqual(open_loop.timestamp_ns("2026-11-23T13:37:04.34934416+01:00"), 1795437424349344160)
        self.assertEqual(open_loop.timestamp_ns("2026-11-23T12:37:04Z"), 1795437424000000000)

    def test_transport_errors_by_kind(self):
        kinds = {
            "dial tcp 127.0.0.1:1: i/o timeout": "timeout",
            "context deadline exceeded": "timeout",
            "write tcp 127.0.0.1:2->127.0.0.1:1: write: broken pipe": "connection",
            "unexpected EOF": "connection",
            "http: server gave HTTP response to HTTPS client": "other",
        }
        for error, kind in kinds.items():
            self.assertEqual(open_loop.classify(0, b"", error, b"x"), kind, error)


class _Answers(http.server.BaseHTTPRequestHandler):
    """BODY to every request; subclasses answer some of them otherwise, by their order of arrival (from 1)."""

    lock = threading.Lock()
    count = 0

    def do_GET(self):
        with self.lock:
            type(self).count += 1
            number = type(self).count
        status, body = self.answer(number)
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def answer(self, number):
        return 200, BODY

    def log_message(self, *args):
        pass


class _Mixed(_Answers):
    """A 503 to every 5th request, a wrong body to every 7th that is not a 5th."""

    def answer(self, number):
        if number % 5 == 0:
            return 503, '{"status":503}'
        return (200, '[{"1":1}]') if number % 7 == 0 else (200, BODY)


class _Stalling(_Answers):
    """Stalls 0.5 s on the 20th request; served one at a time, the requests due meanwhile wait in the queue."""

    def answer(self, number):
        if number == 20:
            time.sleep(0.5)
        return 200, BODY


class _OneAtATime(http.server.HTTPServer):
    # Room in the listen queue for every request due during the stall: a full one would drop connection attempts.
    request_queue_size = 128


class VegetaRunTests(unittest.TestCase):
    """Real Vegeta runs, a few seconds at <= 50 requests a second to 127.0.0.1. ensure_vegeta() installs Vegeta when
    it is missing; without Go it raises the LabError that says so, and these tests fail with it."""

    @classmethod
    def setUpClass(cls):
        cls.vegeta = tools.ensure_vegeta()

    def setUp(self):
        folder = tempfile.TemporaryDirectory()
        self.addCleanup(folder.cleanup)
        self.raw_dir = folder.name

    def attack(self, handler, rate, duration_s, server=None):
        handler.count = 0
        if server is None:
            server = support.LoopbackServer(handler)
            self.addCleanup(server.close)
            base = server.base
        else:
            base = "http://127.0.0.1:%d" % server.server_address[1]
        return open_loop.run(self.vegeta, base + "/rest/unary/3", BODY, rate, duration_s, 5, self.raw_dir, "run_1")

    def test_an_attack_ends_early_when_told_to_stop(self):
        server = support.LoopbackServer(_Answers)
        self.addCleanup(server.close)
        started = time.monotonic()

        record = open_loop.run(
            self.vegeta,
            server.base + "/rest/unary/3",
            BODY,
            20,
            60,
            5,
            self.raw_dir,
            "run_1",
            stop_when=lambda: time.monotonic() - started > 1.0,
        )

        self.assertLess(time.monotonic() - started, 15)
        self.assertNotIn("error", record)
        self.assertGreater(record["sent"], 0)
        self.assertLess(record["sent"], 20 * 10)
        self.assertEqual(record["ok"], record["sent"])

    def test_every_request_answered_right(self):
        record = self.attack(_Answers, rate=50, duration_s=1)

        self.assertNotIn("error", record)
        self.assertEqual((record["sent"], record["ok"], record["errors"]), (50, 50, {}))
        self.assertEqual(record["verified"], {"check": "exact body", "expected_bytes": 25, "checked": 50, "passed": 50})
        self.assertEqual(sorted(os.listdir(self.raw_dir)), ["run_1.txt"])
        with open(os.path.join(self.raw_dir, "run_1.txt")) as handle:
            self.assertIn("Status Codes  [code:count]                      200:50", handle.read())

    def test_shed_and_wrong_answers_are_counted_exactly(self):
        record = self.attack(_Mixed, rate=50, duration_s=1)

        # Of 50: 503 to 5, 10, .. 50; a wrong body to 7, 14, 21, 28, 42 and 49 (35 had a 503).
        self.assertEqual(
            (record["sent"], record["ok"], record["errors"]), (50, 34, {"shed_503": 10, "wrong_answer": 6})
        )
        self.assertEqual((record["failed"], record["non2xx"], record["verified"]["checked"]), (6, 10, 40))
        self.assertEqual(record["rps"], 34.0)

    def test_a_stall_shows_in_the_tail(self):
        server = _OneAtATime(("127.0.0.1", 0), _Stalling)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        self.addCleanup(server.server_close)
        self.addCleanup(server.shutdown)

        record = self.attack(_Stalling, rate=40, duration_s=2, server=server)

        self.assertEqual((record["ok"], record["errors"]), (record["sent"], {}))
        latency = record["latency_ms"]
        # The stalled request took >= 500 ms, and the ~20 due during it waited up to that long: the slowest 1 % are
        # far above the 1 or 2 ms of an unstalled run.
        self.assertGreaterEqual(latency["max"], 500)
        self.assertGreater(latency["p99"], 300)
        self.assertLess(latency["p50"], 300)

    def test_a_vegeta_that_fails_gives_an_error_record(self):
        record = open_loop.run(self.vegeta, "://nowhere", BODY, 10, 1, 5, self.raw_dir, "bad_1")

        self.assertRegex(record["error"], r"^vegeta exited with code 1: bad URL: ://nowhere")
        self.assertEqual(sorted(os.listdir(self.raw_dir)), ["bad_1.txt"])


class OpenLoopResultsTests(unittest.TestCase):
    """An open-loop results.json as the lab writes it (two rates, two repeats each), through the CI check, the
    summary and the report's view."""

    def test_a_clean_sweep_passes_the_check_and_sheds_are_findings_not_failures(self):
        data = support.sample_open_results()

        self.assertEqual(check_results.problems(data), [])
        shed = data["runs"][1]
        self.assertEqual((shed["rate"], shed["sent"], shed["ok"], shed["errors"]), (40, 160, 120, {"shed_503": 40}))
        self.assertEqual(records.problems(shed), [])

    def test_the_check_wants_the_whole_schedule_sent_and_every_counted_answer_checked(self):
        data = support.sample_open_results()
        data["runs"][0]["sent"] -= 1
        data["runs"][2]["verified"]["checked"] -= 3
        data["runs"][4]["errors"]["connection"] = 2
        data["runs"][5]["errors"]["timeout"] = 1

        # A timeout, like a shed, is what a path past its saturation does; a refused connection is not.
        self.assertEqual(
            check_results.problems(data),
            [
                "rest/unary n=50 rate=10/s: sent 39 requests, the schedule had 40 (rate x duration x repeats)",
                "grpc/unary n=50 rate=10/s: 37 200 answers had their body checked, but 40 were right and 0 wrong",
                "grpc/stream n=50 rate=10/s: errors other than sheds and timeouts: connection 2",
            ],
        )

    def test_the_runs_table_has_the_open_loop_columns_and_the_errors_by_kind(self):
        table = view.view(support.sample_open_results())["tables"]["runs"]

        self.assertEqual(
            table["heads"],
            [
                "path",
                "n",
                "rate (/s)",
                "req/s",
                "req/s range",
                "p99 range",
                "spread: req/s · p99",
                "mean",
                "p50",
                "p90",
                "p99",
                "p99.9",
                "max",
                "sent",
                "ok",
                "errors",
            ],
        )
        # rest/unary at 40 a second: a quarter shed; the goodput is the correct answers over the 2 s schedule.
        self.assertEqual(table["rows"][1]["cells"][:5], ["rest/unary", "50", "40", "30.00", "30.00 – 30.00"])
        self.assertEqual(table["rows"][1]["cells"][-3:], ["160", "120", "shed_503 40"])

    def test_the_sweep_axis_is_the_offered_rate_with_errors_per_path(self):
        axis = view.view(support.sample_open_results())["sweep_axis"]

        self.assertEqual(
            (axis["values"], axis["title"], axis["latency_keys"]),
            ([10, 40], "offered rate (requests per second)", ["p50", "p99"]),
        )
        rest = axis["lines"][0]
        self.assertEqual(
            (rest["label"], rest["rps"], rest["error_percent"]), ("rest/unary n=50", [10.0, 30.0], [0.0, 25.0])
        )

    def test_the_summary_says_how_the_load_was_sent(self):
        text = report.summary_markdown(support.sample_open_results())

        self.assertIn(
            "Each run: `echo 'GET <url>' | vegeta attack -rate=<rate>/1s -duration=2s -timeout=120s` (an open loop",
            text,
        )
        self.assertIn("| rest/unary | 50 | 40 | 30.00 |", text)


if __name__ == "__main__":
    unittest.main()
