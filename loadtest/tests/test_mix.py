"""Mixed traffic (MIX): the knob, real ab runs whose statuses are counted one by one, and the table beside alone."""

import http.server
import itertools
import tempfile
import threading
import unittest

from lab.core.errors import SettingsError
from lab.core.settings import Settings
from lab.load import load_generator
from lab.measure import mix
from lab.results import mix as mix_figures
from lab.results import view

BODY = b'[{"1":1},{"2":4}]'
PROBLEM = b'{"type":"about:blank","title":"Service Unavailable","status":503,"detail":"shed"}'


class MixSettingsTests(unittest.TestCase):
    def test_empty_by_default(self):
        self.assertEqual(Settings.from_env({}).mix, [])

    def test_paths_run_together_in_the_order_given_each_once(self):
        settings = Settings.from_env({"MIX": "grpc/stream grpc/unary grpc/stream"})

        self.assertEqual(settings.mix, ["grpc/stream", "grpc/unary"])
        self.assertEqual(settings.as_dict()["mix"], ["grpc/stream", "grpc/unary"])

    def test_an_unknown_path_lists_the_known_ones(self):
        with self.assertRaises(SettingsError) as caught:
            Settings.from_env({"MIX": "grpc/unary soap/unary"})

        self.assertEqual(
            str(caught.exception),
            "unknown path 'soap/unary' in MIX; known paths: rest/unary rest/h2c "
            "grpc/unary grpc/pingpong grpc/stream rest/square",
        )

    def test_one_path_is_no_mix(self):
        with self.assertRaises(SettingsError) as caught:
            Settings.from_env({"MIX": "grpc/unary grpc/unary"})

        self.assertEqual(
            str(caught.exception),
            "MIX loads paths at the same time, so it needs at least two, got "
            "'grpc/unary grpc/unary'; known paths: rest/unary rest/h2c grpc/unary "
            "grpc/pingpong grpc/stream rest/square",
        )

    def test_a_mixed_path_must_be_measured_alone_too(self):
        with self.assertRaises(SettingsError) as caught:
            Settings.from_env({"PATHS": "grpc/unary", "MIX": "grpc/unary grpc/stream"})

        self.assertIn("MIX names grpc/stream, which PATHS does not measure", str(caught.exception))


class _Answers(http.server.BaseHTTPRequestHandler):
    """Of every 4 requests: 2 exact answers, a 503 problem and a 504 problem, in the order the first one says."""

    order = (200, 200, 503, 504)
    counter = itertools.count()
    lock = threading.Lock()

    def do_GET(self):
        with self.lock:
            status = self.order[next(self.counter) % 4]
        body = BODY if status == 200 else PROBLEM.replace(b"503", str(status).encode())
        self.send_response(status)
        self.send_header("Content-Type", "application/json" if status == 200 else "application/problem+json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


class AbStatusesTests(unittest.TestCase):
    """A real ab -v 2 for 1 s against a server whose every answer is known."""

    def serve(self, order):
        handler = type("Handler", (_Answers,), {"order": order, "counter": itertools.count()})
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        self.addCleanup(server.server_close)
        self.addCleanup(server.shutdown)
        return "http://127.0.0.1:%d/rest/unary/2" % server.server_address[1]

    def measure(self, url):
        with tempfile.TemporaryDirectory() as raw:
            figures = load_generator.Ab(Settings.from_env({})).mixed(
                url, BODY.decode(), 1, 1, raw, "mix_rest-unary_n2_c1"
            )
            with open(raw + "/mix_rest-unary_n2_c1.txt") as kept:
                return figures, kept.read()

    def test_every_non_2xx_is_counted_by_status_and_the_exact_answers_are_the_goodput(self):
        figures, kept = self.measure(self.serve((200, 200, 503, 504)))

        completed = figures["completed"]
        self.assertGreater(completed, 20)
        # One client, answers in turn: half are exact, a quarter each 503 and 504 (ab may stop mid-cycle).
        self.assertEqual(figures["statuses"], {"503": (completed + 1) // 4, "504": completed // 4})
        self.assertEqual(figures["non200"], (completed + 1) // 4 + completed // 4)
        self.assertEqual(figures["ok"], completed - figures["non200"])
        self.assertTrue(figures["length_checked"])
        self.assertEqual(figures["goodput"], round(figures["ok"] / figures["seconds"], 2))
        self.assertIsNotNone(figures["p99_ms"])
        self.assertEqual(figures["transport_errors"], {})
        self.assertIn("Complete requests:      %d" % completed, kept)
        self.assertNotIn("LOG: header received", kept)

    def test_when_the_first_answer_is_a_503_only_the_statuses_say_which_were_200s(self):
        figures, _ = self.measure(self.serve((503, 200, 200, 504)))

        self.assertFalse(figures["length_checked"])
        self.assertEqual(figures["ok"], figures["completed"] - figures["non200"])
        self.assertEqual(sorted(figures["statuses"]), ["503", "504"])


class MixFiguresTests(unittest.TestCase):
    def test_vegetas_statuses_and_transport_errors_are_kept_apart(self):
        outcome = {
            "duration_s": 10.0,
            "completed": 95,
            "ok": 80,
            "rps": 8.0,
            "latency_ms": {"p99": 120.5},
            "non2xx": 15,
            "errors": {"shed_503": 10, "http_504": 5, "timeout": 5},
        }

        figures = load_generator.mixed_open_figures(outcome)

        self.assertEqual(
            figures,
            {
                "seconds": 10.0,
                "completed": 95,
                "ok": 80,
                "goodput": 8.0,
                "p99_ms": 120.5,
                "non200": 15,
                "statuses": {"503": 10, "504": 5},
                "transport_errors": {"timeout": 5},
                "wrong_answers": 0,
            },
        )

    def test_alone_goodput_of_ab_counts_only_the_exact_answers(self):
        run = {
            "rps": 40.0,
            "completed": 1000,
            "non2xx": 100,
            "verified": {"passed": 900},
            "latency_ms": {"p99": 20.0},
            "repeats": [{}, {}],
        }

        self.assertEqual(
            mix.alone_figures(run),
            {"goodput": 36.0, "p99_ms": 20.0, "non200": {"non-2xx": 100}, "answered": 1000, "repeats": 2},
        )

    def test_a_closed_loop_mix_lasts_as_long_as_the_slowest_path_alone(self):
        self.assertEqual(mix.window_s([{"time_taken_s": 2.2}, {"time_taken_s": 26.1}, None]), 27)
        self.assertEqual(mix.window_s([{"time_taken_s": 0.3}]), 1)

    def data(self):
        unary = {
            "path": "grpc/unary",
            "seconds": 27.0,
            "completed": 60,
            "ok": 40,
            "goodput": 1.48,
            "p99_ms": 4100.0,
            "non200": 20,
            "statuses": {"504": 20},
            "transport_errors": {},
            "alone": {"goodput": 38.2, "p99_ms": 210.0, "non200": {}, "answered": 1000, "repeats": 1},
        }
        stream = {
            "path": "grpc/stream",
            "seconds": 27.0,
            "completed": 6172,
            "ok": 6172,
            "goodput": 228.6,
            "p99_ms": 40.0,
            "non200": 0,
            "statuses": {},
            "transport_errors": {},
            "alone": {"goodput": 240.0, "p99_ms": 35.0, "non200": {}, "answered": 1000, "repeats": 1},
        }
        return {
            "settings": {"mix": ["grpc/unary", "grpc/stream"], "n": [2000], "concurrency": [6], "load": "closed"},
            "mix": {
                "paths": ["grpc/unary", "grpc/stream"],
                "load": "closed",
                "runs": [{"n": 2000, "point": 6, "seconds": 27, "paths": [unary, stream]}],
            },
        }

    def test_the_table_puts_each_path_beside_itself_alone(self):
        table = mix_figures.table(self.data(), view.fmt)["table"]

        self.assertEqual(
            table["heads"],
            [
                "path",
                "n",
                "concurrency",
                "goodput mixed (/s)",
                "goodput alone (/s)",
                "% of alone",
                "p99 mixed (ms)",
                "p99 alone (ms)",
                "non-200 mixed",
                "non-200 alone",
            ],
        )
        self.assertEqual(
            [row["cells"] for row in table["rows"]],
            [
                [
                    "grpc/unary",
                    "2000",
                    "6",
                    "1.48",
                    "38.20",
                    "4",
                    "4,100.000",
                    "210.000",
                    "504 20 (of 60)",
                    "0 (of 1000)",
                ],
                [
                    "grpc/stream",
                    "2000",
                    "6",
                    "228.60",
                    "240.00",
                    "95",
                    "40.000",
                    "35.000",
                    "0 (of 6172)",
                    "0 (of 1000)",
                ],
            ],
        )

    def test_a_complete_mix_has_no_problem_and_a_missing_path_is_named(self):
        data = self.data()
        self.assertEqual(mix_figures.problems(data), [])

        data["mix"]["runs"][0]["paths"].pop()
        self.assertEqual(mix_figures.problems(data), ["mix n=2000 6: grpc/stream: missing"])
        self.assertEqual(
            mix_figures.problems({"settings": {"mix": ["grpc/unary", "grpc/stream"]}}),
            ["MIX is grpc/unary grpc/stream but results.json has no mix"],
        )


if __name__ == "__main__":
    unittest.main()
