"""LOAD=knee: the SLO read, the search (lab.core.knee) against paths whose latency grows with the rate, the progress
plan, and the answer in results.json, its check, summary.md and the report."""

import copy
import unittest

from lab.core import knee
from lab.core.errors import SettingsError
from lab.core.settings import Settings
from lab.measure import progress
from lab.results import check_results, report, results

from .support import sample_open_results


def path_that_saturates_at(capacity, base_ms=20.0):
    """An open-loop record maker for a path that answers in base_ms below capacity requests a second and queues
    beyond it: p99 grows with the excess, and from twice the capacity it sheds."""
    measured = []

    def measure(rate, step):
        measured.append(rate)
        over = max(0.0, rate / capacity - 1)
        shed = rate // 10 if rate >= 2 * capacity else 0
        return {"sent": rate * 10, "ok": rate * 10 - shed, "latency_ms": {"p99": base_ms + 5000 * over}}

    return measure, measured


class SloTests(unittest.TestCase):
    def test_an_slo_is_a_latency_figure_and_a_time(self):
        self.assertEqual(knee.parse_slo("p99<=1s"), knee.Slo("p99", 1000.0, "p99 <= 1 s"))
        self.assertEqual(knee.parse_slo(" p90 <= 250ms"), knee.Slo("p90", 250.0, "p90 <= 250 ms"))

    def test_anything_else_is_refused_before_the_lab_starts(self):
        for value in ("p99<1s", "p98<=1s", "p99<=1", "rps>=10", "p99<=0s"):
            with self.subTest(value), self.assertRaises(SettingsError) as refused:
                Settings.from_env({"LOAD": "knee", "SLO": value})
            self.assertIn("SLO=", str(refused.exception))

    def test_a_knee_run_starts_from_one_rate_and_measures_each_once(self):
        with self.assertRaises(SettingsError) as refused:
            Settings.from_env({"LOAD": "knee", "RATE": "10 20"})
        settings = Settings.from_env({"LOAD": "knee", "RATE": "30", "REPEATS": "3"})

        self.assertIn("LOAD=knee searches each path's rate from one RATE, got 10 20", str(refused.exception))
        self.assertEqual((settings.repeats, settings.open_loop, settings.floor), (1, True, False))
        recorded = settings.as_dict()
        self.assertEqual(recorded["load"], "open")
        self.assertEqual(recorded["knee"], {"slo": "p99 <= 1 s", "start_rate": 30, "max_steps": 10})


class SearchTests(unittest.TestCase):
    def test_it_doubles_until_the_slo_breaks_then_narrows_to_within_a_tenth(self):
        measure, measured = path_that_saturates_at(300)
        slo = knee.parse_slo("p99<=100ms")  # broken above 316 a second

        found = knee.search(measure, 50, slo)

        self.assertEqual(measured, [50, 100, 200, 400, 300, 350, 325])
        self.assertEqual((found.held, found.broke), (300, 325))
        self.assertEqual(found.why, "the rate that broke is within 10 % of the rate that held")
        self.assertEqual([step["held"] for step in found.steps], [True, True, True, False, True, False, False])

    def test_a_start_that_breaks_halves_until_one_holds(self):
        measure, measured = path_that_saturates_at(30)

        found = knee.search(measure, 200, knee.parse_slo("p99<=100ms"))

        # 31 broke before 29 held: it is measured again, and breaks again.
        self.assertEqual(measured, [200, 100, 50, 25, 37, 31, 28, 29, 31])
        self.assertEqual((found.held, found.broke), (29, 31))

    def test_a_rate_that_broke_on_a_cold_start_is_measured_again_once_lower_rates_held(self):
        measure, measured = path_that_saturates_at(300)

        def cold_first(rate, step):
            record = measure(rate, step)
            return dict(record, latency_ms={"p99": 900.0}) if step == 1 else record

        found = knee.search(cold_first, 200, knee.parse_slo("p99<=100ms"))

        self.assertEqual(measured, [200, 100, 150, 175, 187, 200, 400, 300, 350, 325])
        self.assertEqual((found.held, found.broke), (300, 325))
        self.assertEqual([step["held"] for step in found.steps][:6], [False, True, True, True, True, True])

    def test_the_search_is_bounded_and_says_why_it_stopped(self):
        measure, measured = path_that_saturates_at(10**9)
        found = knee.search(measure, 1, knee.parse_slo("p99<=1s"), max_steps=5)
        self.assertEqual((measured, found.held, found.broke), ([1, 2, 4, 8, 16], 16, None))
        self.assertEqual(found.why, "stopped after 5 rates, the most a path is measured at")

        nothing, _ = path_that_saturates_at(0.5)
        found = knee.search(nothing, 4, knee.parse_slo("p99<=100ms"))
        self.assertEqual((found.held, found.why), (None, "not even 1 request a second held"))

    def test_a_shed_request_breaks_the_slo_however_fast_the_rest_answered(self):
        slo = knee.parse_slo("p99<=1s")
        self.assertTrue(slo.held({"sent": 100, "ok": 100, "latency_ms": {"p99": 999.0}}))
        self.assertFalse(slo.held({"sent": 100, "ok": 99, "latency_ms": {"p99": 10.0}}))
        self.assertFalse(slo.held({"sent": 0, "ok": 0, "latency_ms": {"p99": None}}))


class ProgressTests(unittest.TestCase):
    def test_the_plan_counts_at_most_ten_rates_per_path(self):
        settings = Settings.from_env({"LOAD": "knee", "PATHS": "rest/unary grpc/unary", "DURATION": "5"})

        steps = [step for step in progress.plan(settings, ["netty"], []) if step.key[0] == "knee"]

        self.assertEqual(len(steps), 20)
        self.assertEqual(steps[0].label, "searching rest/unary's highest rate within p99 <= 1 s, rate 1 of at most 10")
        self.assertEqual(steps[0].expected_s, 7.0)


def knee_results():
    """An open-loop results.json whose rates are those of two searches, with its `knee` as the lab writes it."""
    data = sample_open_results(rates=(10, 40), repeated=1)
    data["runs"] = [run for run in data["runs"] if run["path"] in ("rest/unary", "grpc/unary")]
    data["settings"].update(paths=["rest/unary", "grpc/unary"], repeats=1)
    data["settings"]["knee"] = {"slo": "p99 <= 30 ms", "start_rate": 10, "max_steps": 10}
    steps = {
        "rest/unary": [(10, False, 40.0)],
        "grpc/unary": [(10, True, 20.5), (20, True, 20.6), (40, True, 20.6), (80, False, 45.0)],
    }
    data["knee"] = [
        {
            "path": path,
            "payload": "small",
            "network": "loopback",
            "stack": "",
            "n": 50,
            "slo": "p99 <= 30 ms",
            "held_rate": max((rate for rate, held, _ in trail if held), default=None),
            "broken_rate": min((rate for rate, held, _ in trail if not held), default=None),
            "why": "not even 1 request a second held" if path == "rest/unary" else "stopped after 4 rates",
            # At 80 a second grpc/unary shed 7 of its 100 requests as well.
            "steps": [
                {"rate": rate, "held": held, "p99_ms": p99, "sent": 100, "ok": 93 if rate == 80 else 100}
                for rate, held, p99 in trail
            ],
        }
        for path, trail in steps.items()
    ]
    return data


class AnswerTests(unittest.TestCase):
    def test_the_verdict_says_each_paths_held_rate_against_the_others(self):
        data = knee_results()
        data["knee"][0]["held_rate"], data["knee"][0]["why"] = (
            10,
            "the rate that broke is within 10 % of the rate that held",
        )

        summary = report.summary_markdown(data)

        self.assertIn(
            "- within p99 <= 30 ms, grpc/unary holds 4.0 times rest/unary's rate (40 against 10 requests a second)",
            summary,
        )
        self.assertIn("## The highest rate within the SLO", summary)
        self.assertIn(
            "| grpc/unary · n=50 | 40/s | 20.6 ms | 80/s | 45.0 ms; 7 of 100 not answered right "
            "| 10 ✓, 20 ✓, 40 ✓, 80 ✗ | stopped after 4 rates |",
            summary,
        )

    def test_a_path_that_held_no_rate_says_so_and_the_document_holds_to_its_schema(self):
        data = knee_results()

        self.assertIn(
            "rest/unary held no rate within p99 <= 30 ms: not even 1 request a second held",
            report.summary_markdown(data),
        )
        self.assertEqual(results.violations(data), [])
        self.assertIn('<table id="knee-table">', report.render(data, "", ""))

    def test_the_check_fails_a_held_rate_whose_step_broke_the_slo(self):
        data = knee_results()
        self.assertEqual([p for p in check_results.problems(data) if "knee" in p], [])

        wrong = copy.deepcopy(data)
        wrong["knee"][1]["held_rate"] = 80
        self.assertIn(
            "knee: grpc/unary n=50 says it held 80/s, but that rate broke p99 <= 30 ms (p99 45.0 ms)",
            check_results.problems(wrong),
        )


if __name__ == "__main__":
    unittest.main()
