"""A repeat measured by time: ab runs of whole rounds one after another until DURATION is filled, read as one run."""

import http.server
import os
import shutil
import tempfile
import time
import unittest

from lab.core import catalogue, warmup
from lab.core.settings import Settings
from lab.experiments import many_clients
from lab.load import ab_output, load_generator
from lab.measure import bench, server_metrics
from lab.stage.services import Service

from tests import support

DELAY_S = 0.02


class _Slow(http.server.BaseHTTPRequestHandler):
    """Answers every GET after DELAY_S, as a path whose requests take a while."""

    def do_GET(self):
        time.sleep(DELAY_S)
        body = b"[1]"
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


class PartSecondsTest(unittest.TestCase):
    def test_each_part_fills_the_rest_of_duration_s_share_so_that_the_repeat_ends_near_duration(self):
        self.assertEqual(5.0, bench.part_seconds(20.0, 4, []))
        # A first part that ran 7 s: the second fills to 10 s, the last ones to 15 and 20.
        self.assertEqual(3.0, bench.part_seconds(20.0, 4, [7.0]))
        self.assertEqual(5.5, bench.part_seconds(20.0, 4, [7.0, 2.5]))
        self.assertEqual(20.0, sum([7.0, 2.5, 5.5]) + bench.part_seconds(20.0, 4, [7.0, 2.5, 5.5]))

    def test_parts_that_an_earlier_long_part_already_filled_ask_for_nothing(self):
        # One round of requests that outlasts a part (20 s): the first part measures the whole repeat.
        self.assertEqual([-10.0, -5.0, 0.0], [bench.part_seconds(20.0, 4, [20.0] + [0.0] * k) for k in range(3)])


class MergeTest(unittest.TestCase):
    def test_curves_are_merged_weighted_by_each_runs_requests(self):
        fast = [float(p) for p in range(101)]
        slow = [100.0 + p for p in range(101)]
        self.assertEqual(
            [0.0, 50.0, 100.0, 150.0, 200.0],
            [ab_output.merge_curves([fast, slow], [10, 10])[p] for p in (0, 25, 50, 75, 100)],
        )
        # Three times as many fast requests: the median is inside the fast run's curve.
        self.assertEqual(66.667, ab_output.merge_curves([fast, slow], [30, 10])[50])

    def test_reports_add_up_as_ab_would_count_one_run(self):
        first = ab_output.AbReport(
            concurrency=4,
            completed=40,
            failed=1,
            failed_breakdown=_breakdown(1),
            non2xx=2,
            time_taken_s=1.0,
            rps=40.0,
            mean_ms=100.0,
            mean_across_ms=25.0,
            document_length=3,
        )
        second = ab_output.AbReport(
            concurrency=4,
            completed=20,
            failed=0,
            failed_breakdown=_breakdown(0),
            non2xx=0,
            time_taken_s=1.0,
            rps=20.0,
            mean_ms=200.0,
            mean_across_ms=50.0,
            document_length=3,
        )
        merged = ab_output.merge([first, second], [float(p) for p in range(101)])
        self.assertEqual(
            (60, 1, 2, 2.0, 30.0, 133.333, 33.333),
            (
                merged.completed,
                merged.failed,
                merged.non2xx,
                merged.time_taken_s,
                merged.rps,
                merged.mean_ms,
                merged.mean_across_ms,
            ),
        )
        self.assertEqual(
            {50: 50, 66: 66, 75: 75, 80: 80, 90: 90, 95: 95, 98: 98, 99: 99, 100: 100}, merged.percentile_table_ms
        )


def _breakdown(connect):
    return {"connect": connect, "receive": 0, "length": 0, "exceptions": 0}


@unittest.skipUnless(shutil.which("ab"), "needs ApacheBench (apache2-utils)")
class TimedRepeatTest(unittest.TestCase):
    def test_a_repeat_lasts_duration_within_5_percent_whatever_the_pace_it_started_from(self):
        server = support.LoopbackServer(_Slow)
        self.addCleanup(server.close)
        settings = Settings.from_env({"DURATION": "2"})
        folder = tempfile.mkdtemp()
        report_path, csv_path = os.path.join(folder, "run.txt"), os.path.join(folder, "run.csv")
        # 4 clients at 20 ms a request serve about 200 a second; start from a pace 4 times too slow (a cold warm-up).
        first = load_generator.requests_for(50.0, 4, settings.duration_s * load_generator.FIRST_PART)
        closed = load_generator.Ab(settings).closed_loop(server.base + "/", 4, first, report_path, csv_path)

        self.assertIsNone(closed.error)
        self.assertGreater(closed.runs, 1)
        self.assertAlmostEqual(settings.duration_s, closed.report.time_taken_s, delta=0.05 * settings.duration_s)
        self.assertEqual(closed.requests, closed.report.completed)
        self.assertEqual(0, closed.requests % 4)
        self.assertAlmostEqual(closed.report.completed / closed.report.time_taken_s, closed.report.rps, delta=0.01)
        self.assertEqual(101, len(closed.curve))
        self.assertEqual(sorted(closed.curve), closed.curve)
        self.assertGreaterEqual(closed.curve[50], DELAY_S * 1000)
        with open(report_path) as handle:
            self.assertEqual(closed.runs, handle.read().count("--- ab run "))
        with open(csv_path) as handle:
            self.assertEqual(closed.curve, ab_output.parse_percentile_csv(handle.read(), closed.report.completed))

    def test_a_fixed_count_is_one_ab_run_of_that_count(self):
        server = support.LoopbackServer(_Slow)
        self.addCleanup(server.close)
        settings = Settings.from_env({"REQUESTS": "12", "CONCURRENCY": "4", "DURATION": "2"})
        folder = tempfile.mkdtemp()
        closed = load_generator.Ab(settings).closed_loop(
            server.base + "/", 4, 12, os.path.join(folder, "run.txt"), os.path.join(folder, "run.csv")
        )
        self.assertEqual((None, 1, 12, 12), (closed.error, closed.runs, closed.requests, closed.report.completed))


class _Compiling(_Slow):
    """A path whose service's JIT compiles for the first COMPILING_S seconds (half of every second), then settles."""

    started = 0.0

    def do_GET(self):
        if self.path != "/actuator/prometheus":
            return super().do_GET()
        elapsed_ms = (time.monotonic() - _Compiling.started) * 1000.0
        compiled_ms = 0.5 * min(elapsed_ms, _Compiling.compiling_s * 1000.0)
        body = ('jvm_compilation_time_ms_total{compiler="HotSpot"} %.1f\n' % compiled_ms).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@unittest.skipUnless(shutil.which("ab"), "needs ApacheBench (apache2-utils)")
class JitSettledWarmUpTest(unittest.TestCase):
    def warm(self, compiling_s: float) -> warmup.WarmUp:
        _Compiling.started, _Compiling.compiling_s = time.monotonic(), compiling_s
        server = support.LoopbackServer(_Compiling)
        self.addCleanup(server.close)
        settings = Settings.from_env({"WARMUP_SECONDS": "1", "CONCURRENCY": "4"})
        watch = server_metrics.JitWatch({"square": [server.base + "/actuator/prometheus"]})
        report_path = self.report_path = os.path.join(tempfile.mkdtemp(), "warm.txt")
        return load_generator.Ab(settings).warm_rounds(server.base + "/", 4, report_path, watch.busiest_share, print)

    def test_the_warm_up_goes_on_while_the_jit_compiles_then_stops(self):
        warm = self.warm(compiling_s=1.4)
        self.assertTrue(warm.jit_settled)
        # Past the JIT's 1.4 s, within a quarter-second stretch of it; not the cap of twice WARMUP_SECONDS, 2 s.
        self.assertGreater(warm.seconds, 1.4)
        self.assertLess(warm.seconds, 2.0)
        self.assertGreater(warm.pace, 50)
        # The warm-up is the measured runs' loop of whole rounds: its raw report keeps every ab run of it.
        with open(self.report_path) as handle:
            self.assertGreater(handle.read().count("--- ab run "), 2)

    def test_a_jit_that_never_settles_stops_the_warm_up_at_jit_wait_times_warmup_seconds(self):
        warm = self.warm(compiling_s=60.0)
        self.assertFalse(warm.jit_settled)
        self.assertAlmostEqual(warmup.JIT_WAIT * 1.0, warm.seconds, delta=0.5)
        self.assertEqual({"seconds": round(warm.seconds, 1), "jit_settled": False}, warm.record())


@unittest.skipUnless(shutil.which("ab"), "needs ApacheBench (apache2-utils)")
class ManyClientsWarmUpTest(unittest.TestCase):
    """The many-clients command's warm-up waits for the JIT as the measured runs' does."""

    def warm(self, compiling_s: float):
        _Compiling.started, _Compiling.compiling_s = time.monotonic(), compiling_s
        server = support.LoopbackServer(_Compiling)
        self.addCleanup(server.close)
        page = [server.base + "/actuator/prometheus"]
        # The test's own process stands in for the services' processes; the page is their metrics.
        started = [
            Service(catalogue.AGGREGATOR, [os.getpid()], server.base, page),
            Service(catalogue.SQUARE_REST, [os.getpid()], server.base, page),
        ]
        results_dir = tempfile.mkdtemp()
        os.makedirs(os.path.join(results_dir, "raw"))
        options = many_clients.parse(["--paths", "rest/unary", "--clients", "4", "--warmup-seconds", "2"])
        began = time.monotonic()
        many_clients.warm_up(options, catalogue.ALL["rest/unary"], 2, server.base + "/", started, [], results_dir, 5.0)
        return time.monotonic() - began, sorted(os.listdir(os.path.join(results_dir, "raw")))

    def test_the_warm_up_goes_on_in_stretches_while_the_jit_compiles(self):
        seconds, reports = self.warm(compiling_s=3.0)
        # 2 s, then stretches of a second (ab's -t is whole seconds) until one without compiling, then the settle of
        # about half a second; not the 6 s cap.
        self.assertGreater(seconds, 3.5)
        self.assertLess(seconds, 5.6)
        self.assertEqual(3, len(reports))
        self.assertEqual("rest-unary_n2_warmup1.txt", reports[0])

    def test_a_jit_that_never_settles_stops_the_warm_up_at_its_cap_times_the_warm_up(self):
        seconds, reports = self.warm(compiling_s=60.0)
        self.assertGreater(seconds, many_clients.WARM_UP_CAP * 2.0 - 0.5)
        self.assertLess(seconds, many_clients.WARM_UP_CAP * 2.0 + 1.5)


class _Squares(_Slow):
    """rest/unary's exact answer for n=2, quickly."""

    def do_GET(self):
        body = catalogue.ALL["rest/unary"].expected_body(2).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@unittest.skipUnless(shutil.which("ab"), "needs ApacheBench (apache2-utils)")
class BenchAroundTheGeneratorTest(unittest.TestCase):
    def test_a_closed_loop_repeat_has_the_generators_figures_and_the_cpu_measured_around_them(self):
        server = support.LoopbackServer(_Squares)
        self.addCleanup(server.close)
        settings = Settings.from_env({"DURATION": "1", "WARMUP_SECONDS": "1", "CONCURRENCY": "2", "N": "2"})
        # The lab's own process stands in for the services' processes: its CPU and RSS are real and readable.
        services = [
            Service(catalogue.AGGREGATOR, [os.getpid()], server.base),
            Service("square-rest-service", [os.getpid()], server.base),
        ]
        raw = tempfile.mkdtemp()
        path, said = catalogue.ALL["rest/unary"], []

        warm = bench.warm_up(path, 2, 2, settings, services, raw, log=said.append)
        record = bench.measure(path, 2, 2, settings, services, raw, 1, log=said.append, pace=warm.pace)

        self.assertNotIn("error", record)
        self.assertGreater(warm.pace, 0)
        self.assertEqual({"report": "raw/rest-unary_n2_c2_1.txt", "csv": "raw/rest-unary_n2_c2_1.csv"}, record["raw"])
        self.assertEqual(record["requests"], record["completed"])
        self.assertEqual(record["completed"], record["verified"]["passed"])
        self.assertEqual(record["completed"] * 2, record["downstream_calls"])
        self.assertIn("ab", record["cpu"])
        self.assertEqual(101, len(record["latency_curve_ms"]))
        self.assertEqual(
            ["rest-unary_n2_c2-warmup.txt", "rest-unary_n2_c2_1.csv", "rest-unary_n2_c2_1.txt"], sorted(os.listdir(raw))
        )
        self.assertTrue(said[0].startswith("  warm-up: 1s at 2 at a time (discarded)"), said)
        self.assertIn(", 2 at a time (repeat 1), then more to fill 1s", said[-1])


if __name__ == "__main__":
    unittest.main()
