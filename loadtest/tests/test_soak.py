"""The soak: Vegeta's results by minute of the schedule, each series' flatness, and what check_results asks of it."""

import unittest

from lab.core.settings import Settings
from lab.load import open_loop
from lab.measure import soak
from lab.results import soak as soak_figures

from tests import support

BODY = support.VEGETA_BODY
result_line = support.vegeta_line


class PerMinuteTests(unittest.TestCase):
    def test_each_request_counts_in_the_minute_it_was_due_and_a_part_minute_is_left_out(self):
        # 2 requests a second for 2.5 "minutes" of 1 s: seq 0-1 in minute 1, 2-3 in minute 2, seq 4 in the part-minute.
        answers = [(0, 10, 200), (1, 30, 200), (2, 5, 200), (3, 7, 503), (4, 1000, 200)]
        lines = [
            result_line(seq, seq * 500_000, latency_ms * 1000, code, BODY if code == 200 else "{}")
            for seq, latency_ms, code in answers
        ]

        record = open_loop.read_results(lines, BODY, rate=2, duration_s=2.5, minute_s=1.0)

        self.assertEqual(
            record["per_minute"], {"minute_s": 1.0, "sent": [2, 2], "ok": [2, 1], "p99_ms": [30.015, 5.003]}
        )
        self.assertEqual(record["ok"], 4)

    def test_a_generator_that_fell_behind_puts_its_lag_into_the_minute_the_request_was_due_in(self):
        # The second request of minute 1 left 0.6 s late and took 10 ms: 610 ms from when it was due. (The
        # histogram's 3 significant digits: each p99 is the top of its bucket, 10 ms is 10.007.)
        lines = [result_line(0, 0, 10_000), result_line(1, 1_100_000, 10_000), result_line(2, 1_000_000, 10_000)]

        record = open_loop.read_results(lines, BODY, rate=2, duration_s=2.0, minute_s=1.0)

        self.assertEqual(record["per_minute"]["p99_ms"], [610.303, 10.007])

    def test_without_minutes_there_is_no_per_minute_series(self):
        record = open_loop.read_results([result_line(0, 0, 1000)], BODY, rate=1, duration_s=1.0)

        self.assertNotIn("per_minute", record)

    def test_a_soak_is_an_open_loop_of_two_minutes_or_more(self):
        self.assertTrue(soak.wanted(Settings.from_env({"LOAD": "open", "DURATION": "120"})))
        self.assertFalse(soak.wanted(Settings.from_env({"LOAD": "open", "DURATION": "119"})))
        self.assertFalse(soak.wanted(Settings.from_env({"DURATION": "3600"})))


class FlatnessTests(unittest.TestCase):
    def test_the_last_thirds_median_against_the_first_thirds(self):
        # Six minutes: thirds of two; first median 100, last median 109 (+9 %): flat; a growing heap is not.
        series = {
            "p99_ms": [98, 102, 150, 40, 108, 110],
            "rss_mib": {"aggregator-service": [200, 200, 201, 202, 203, 204]},
            "heap_after_gc_mib": {"aggregator-service": [30, 31, 34, 36, 39, 41]},
        }

        rows = soak_figures.flatness(series)

        self.assertEqual(
            rows,
            [
                {
                    "series": "p99_ms",
                    "service": None,
                    "minutes": 6,
                    "first": 100,
                    "last": 109,
                    "change_percent": 9.0,
                    "flat": True,
                },
                {
                    "series": "rss_mib",
                    "service": "aggregator-service",
                    "minutes": 6,
                    "first": 200,
                    "last": 203.5,
                    "change_percent": 1.8,
                    "flat": True,
                },
                {
                    "series": "heap_after_gc_mib",
                    "service": "aggregator-service",
                    "minutes": 6,
                    "first": 30.5,
                    "last": 40,
                    "change_percent": 31.1,
                    "flat": False,
                },
            ],
        )

    def test_two_minutes_compare_the_second_with_the_first_and_one_minute_has_no_verdict(self):
        rows = soak_figures.flatness({"p99_ms": [10.0, 11.5]}) + soak_figures.flatness({"p99_ms": [10.0, None]})

        self.assertEqual([(row["change_percent"], row["flat"]) for row in rows], [(15.0, False), (None, None)])


class SoakCheckTests(unittest.TestCase):
    def run_record(self, **series):
        per_minute = {
            "minute_s": 60.0,
            "sent": [600, 600],
            "ok": [600, 599],
            "p99_ms": [12.0, 13.0],
            "rss_mib": {"aggregator-service": [250.0, 251.0]},
            "heap_after_gc_mib": {"aggregator-service": [40.0, 40.5]},
        }
        per_minute.update(series)
        return {"duration_s": 120.0, "sent": 1200, "ok": 1199, "per_minute": per_minute}

    def test_a_complete_soak_has_no_problem(self):
        self.assertEqual(soak_figures.problems(self.run_record()), [])

    def test_a_minute_without_a_reading_is_named_with_why(self):
        record = self.run_record(
            heap_after_gc_mib={"aggregator-service": [40.0, None]},
            errors=["aggregator-service: no heap after GC: jcmd 42 GC.run exited with code 1"],
        )

        self.assertEqual(
            soak_figures.problems(record),
            [
                "minutes without a figure: heap after GC (MiB) of aggregator-service (aggregator-service: no heap "
                "after GC: jcmd 42 GC.run exited with code 1)"
            ],
        )

    def test_minutes_that_do_not_match_the_duration(self):
        record = self.run_record(sent=[600], ok=[600], p99_ms=[12.0])

        self.assertIn("1 minutes in the per-minute series, DURATION has 2", soak_figures.problems(record))


if __name__ == "__main__":
    unittest.main()
