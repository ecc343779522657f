"""Repeats: a run's medians, sums and peaks over its repeats, its spread, and how the summary, the report's view
and the CI check treat them."""

import copy
import json
import unittest

from lab.core import catalogue, repeats
from lab.core.errors import SettingsError
from lab.core.settings import Settings
from lab.measure import bench
from lab.results import check_results, report, results, verdict, view

from tests.support import fixture, report_texts, sample_results


def repeated(run, rps_values, p99_values=None):
    """Three (or more) repeats of a real sample run, with the given req/s (and p99), combined as the lab does."""
    records = []
    for index, rps in enumerate(rps_values):
        record = copy.deepcopy(run)
        record["rps"] = rps
        record["started_at"] = "2026-11-23T10:0%d:00+00:00" % index
        if p99_values:
            record["latency_ms"]["p99"] = p99_values[index]
        records.append(record)
    return repeats.combine(records, bench.repeat_summary)


class InterleavedTests(unittest.TestCase):
    def test_every_warm_up_comes_first_then_each_round_measures_every_item_once(self):
        calls = []

        def measure(repeat, index, item, earlier, part=1):
            calls.append(("measure", repeat, index, item))
            return {"rps": repeat * 10 + index}

        measured = repeats.interleaved(
            ["a", "b"],
            2,
            measure,
            warm=lambda index, item: calls.append(("warm", index, item)),
            after=lambda item, record: calls.append(("after", item, record["rps"])),
        )

        self.assertEqual(
            [
                ("warm", 1, "a"),
                ("warm", 2, "b"),
                ("measure", 1, 1, "a"),
                ("after", "a", 11),
                ("measure", 1, 2, "b"),
                ("after", "b", 12),
                ("measure", 2, 1, "a"),
                ("after", "a", 21),
                ("measure", 2, 2, "b"),
                ("after", "b", 22),
            ],
            calls,
        )
        self.assertEqual({"a": [{"rps": 11}, {"rps": 21}], "b": [{"rps": 12}, {"rps": 22}]}, measured)

    def test_without_a_warm_up_the_rounds_start_at_once(self):
        measured = repeats.interleaved([("x", 1)], 3, lambda repeat, index, item, earlier, part: {"repeat": repeat})
        self.assertEqual({("x", 1): [{"repeat": 1}, {"repeat": 2}, {"repeat": 3}]}, measured)

    def test_in_parts_the_parts_of_every_repeat_take_turns_and_each_repeat_is_added_up_from_its_own(self):
        calls = []

        def measure(repeat, index, item, earlier, part=1):
            calls.append((item, repeat, len(earlier) + 1))
            return {"part": "%s%d.%d" % (item, repeat, len(earlier) + 1)}

        measured = repeats.interleaved(
            ["a", "b"],
            2,
            measure,
            after=lambda item, record: calls.append(("after", item)),
            parts=2,
            add_up=lambda item, parts: {"parts": [part["part"] for part in parts]},
        )

        # Part 1 backward, part 2 (the last) forward: repeat 2 first, then repeat 1 first.
        self.assertEqual(
            [
                ("a", 2, 1),
                ("b", 2, 1),
                ("a", 1, 1),
                ("b", 1, 1),
                ("a", 1, 2),
                ("after", "a"),
                ("b", 1, 2),
                ("after", "b"),
                ("a", 2, 2),
                ("after", "a"),
                ("b", 2, 2),
                ("after", "b"),
            ],
            calls,
        )
        self.assertEqual(
            {
                "a": [{"parts": ["a1.1", "a1.2"]}, {"parts": ["a2.1", "a2.2"]}],
                "b": [{"parts": ["b1.1", "b1.2"]}, {"parts": ["b2.1", "b2.2"]}],
            },
            measured,
        )

    def test_the_turns_go_backward_and_forward_so_that_a_steady_drift_weighs_on_every_repeat_alike(self):
        self.assertEqual([(1, 1), (1, 2), (1, 3)], repeats.turns(3, 1))
        order = repeats.turns(3, 4)
        self.assertEqual(
            [(1, 3), (1, 2), (1, 1), (2, 1), (2, 2), (2, 3), (3, 3), (3, 2), (3, 1), (4, 1), (4, 2), (4, 3)], order
        )
        # A machine slowing by the same step each turn: every repeat's turns add up to the same lateness.
        lateness = {repeat: sum(at for at, (_, r) in enumerate(order) if r == repeat) for repeat in (1, 2, 3)}
        self.assertEqual({1: 22, 2: 22, 3: 22}, lateness)

    def test_a_part_measured_as_none_is_left_out_of_its_repeat(self):
        def measure(repeat, index, item, earlier, part=1):
            # Repeat 2's first part filled it: its later part is not measured.
            return None if repeat == 2 and earlier else {"part": "%d.%d" % (repeat, len(earlier) + 1)}

        measured = repeats.interleaved(
            ["a"], 2, measure, parts=2, add_up=lambda item, parts: {"parts": [p["part"] for p in parts]}
        )

        self.assertEqual({"a": [{"parts": ["1.1", "1.2"]}, {"parts": ["2.1"]}]}, measured)


class MergeTests(unittest.TestCase):
    def test_figures_are_medians_counts_are_sums_and_peaks_the_largest(self):
        merged = repeats.merge(
            [
                {
                    "rps": 10.0,
                    "completed": 1000,
                    "rss_mb": {"a": 100.0},
                    "failed_breakdown": {"length": 0},
                    "latency_curve_ms": [1.0, 5.0, 9.0],
                    "url": "http://x/1",
                    "errors": {"shed_503": 2},
                },
                {
                    "rps": 30.0,
                    "completed": 1000,
                    "rss_mb": {"a": 140.0},
                    "failed_breakdown": {"length": 1},
                    "latency_curve_ms": [2.0, 3.0, 20.0],
                    "url": "http://x/1",
                    "errors": {"timeout": 1},
                },
                {
                    "rps": 20.0,
                    "completed": 999,
                    "rss_mb": {"a": 120.0},
                    "failed_breakdown": {"length": 0},
                    "latency_curve_ms": [3.0, 4.0, 10.0],
                    "url": "http://x/1",
                    "errors": {},
                },
            ]
        )

        self.assertEqual(
            merged,
            {
                "rps": 20.0,
                "completed": 2999,
                "rss_mb": {"a": 140.0},
                "failed_breakdown": {"length": 1},
                "latency_curve_ms": [2.0, 4.0, 10.0],
                "url": "http://x/1",
                "errors": {"shed_503": 2, "timeout": 1},
            },
        )

    def test_a_floor_runs_unanswered_messages_add_up_over_its_repeats(self):
        merged = repeats.merge(
            [
                {"calls_per_second": 100.0, "unanswered_at_end": 0},
                {"calls_per_second": 300.0, "unanswered_at_end": 3},
                {"calls_per_second": 200.0, "unanswered_at_end": 1},
            ]
        )

        self.assertEqual(merged, {"calls_per_second": 200.0, "unanswered_at_end": 4})

    def test_a_repeat_with_an_error_makes_the_run_an_error_and_keeps_every_repeat(self):
        run = sample_results()["runs"][0]
        broken = dict(copy.deepcopy(run), error="ab exited with code 1: apr_socket_recv: Connection refused")

        combined = repeats.combine([run, broken, run], bench.repeat_summary)

        self.assertEqual(combined["error"], "ab exited with code 1: apr_socket_recv: Connection refused")
        self.assertEqual(len(combined["repeats"]), 3)
        self.assertEqual(combined["repeats"][1]["error"], combined["error"])


class SpreadTests(unittest.TestCase):
    def test_spread_is_max_minus_min_over_the_median_in_percent(self):
        run = repeated(sample_results()["runs"][0], [20.0, 22.0, 25.0], p99_values=[100.0, 120.0, 110.0])

        self.assertEqual(run["rps"], 22.0)
        self.assertEqual(run["latency_ms"]["p99"], 110.0)
        self.assertEqual(run["spread"]["rps"], round(5 / 22 * 100, 1))
        self.assertEqual(run["spread"]["p99"], round(20 / 110 * 100, 1))
        self.assertEqual(run["spread"]["cpu_us_per_call"], 0.0)
        self.assertEqual([r["rps"] for r in run["repeats"]], [20.0, 22.0, 25.0])
        self.assertEqual(run["repeats"][2]["started_at"], "2026-11-23T10:02:00+00:00")
        self.assertEqual(repeats.value_range(run, "rps"), [20.0, 25.0])
        self.assertTrue(repeats.unsteady(run))

    def test_one_repeat_has_no_spread_and_a_figure_a_repeat_lacks_has_no_median(self):
        run = sample_results()["runs"][0]
        self.assertEqual(
            repeats.spread([bench.repeat_summary(run)], repeats.SPREAD_OF),
            {"rps": None, "p50": None, "p99": None, "cpu_us_per_call": None},
        )
        # A repeat of an open loop past saturation with no correct answer has no latency to take a median of.
        self.assertEqual(repeats.merge([{"p99": 100.0}, {"p99": None}, {"p99": 300.0}]), {"p99": None})

    def test_a_run_that_held_still_is_not_flagged(self):
        run = repeated(sample_results()["runs"][0], [100.0, 104.0, 109.0])

        self.assertEqual(run["spread"]["rps"], 8.7)
        self.assertFalse(repeats.unsteady(run))


class RepeatedResultsTests(unittest.TestCase):
    def results(self):
        data = sample_results()
        data["settings"]["repeats"] = 3
        steady, moving = [1400.0, 1433.77, 1450.0], [600.0, 676.51, 700.0]
        data["runs"] = [
            repeated(data["runs"][0], steady),
            repeated(data["runs"][1], moving),
            repeated(data["runs"][2], [164.81] * 3),
        ]
        return data

    def test_counts_add_up_over_the_repeats_and_the_ci_check_passes(self):
        data = self.results()

        self.assertEqual(data["runs"][0]["completed"], 3000)
        self.assertEqual(data["runs"][0]["server_side"]["square_calls"], 3 * 1000 * 1000)
        self.assertEqual(check_results.problems(data), [])

    def test_bytes_per_call_are_the_median_of_the_repeats_over_all_their_calls(self):
        records = []
        for request, closed in ((106.9, 0), (108.0, 1), (107.5, 0)):
            record = copy.deepcopy(sample_results()["runs"][0])
            record["bytes_per_call"].update(request=request, connections_closed=closed)
            records.append(record)

        run = repeats.combine(records, bench.repeat_summary)

        self.assertEqual(
            {
                key: run["bytes_per_call"][key]
                for key in ("request", "response", "square_calls", "connections_closed", "method")
            },
            {
                "request": 107.5,
                "response": 110.0,
                "square_calls": 3 * 1000 * 1000,
                "connections_closed": 1,
                "method": "tcp_info",
            },
        )
        self.assertEqual(
            [repeat["bytes_per_call"] for repeat in run["repeats"]],
            [
                {"request": 106.9, "response": 110.0},
                {"request": 108.0, "response": 110.0},
                {"request": 107.5, "response": 110.0},
            ],
        )

    def test_the_ci_check_wants_every_repeat(self):
        data = self.results()
        data["settings"]["repeats"] = 5

        self.assertIn("rest/unary n=1000 c=100: 3 repeats, REPEATS=5", check_results.problems(data))

    def test_the_alert_counts_runs_not_their_reasons(self):
        data = self.results()
        data["settings"]["parts"] = 4
        steady = data["runs"][0]
        steady["warm_up"] = {"seconds": 12.0, "jit_settled": False}
        for repeat in steady["repeats"]:
            repeat.update(parts=1, rounds=1)
        for run in data["runs"][1:]:
            for repeat in run["repeats"]:
                repeat.update(parts=4, rounds=4)

        alerts = report_texts(data, '<div class="alert">')

        less_certain = [alert for alert in alerts if "less certain" in alert]
        self.assertEqual(1, len(less_certain))
        self.assertTrue(less_certain[0].startswith("1 run(s) less certain than the others: rest/unary (each repeat"))
        self.assertIn("rest/unary (its warm-up ended with a service's JIT compiler still busy)", less_certain[0])

    def test_the_view_gives_the_range_and_flags_a_spread_above_ten_percent(self):
        data = self.results()
        page = view.view(data)

        self.assertEqual(
            report_texts(data, '<div class="alert">'),
            [
                "1 run(s) moved more than 10 % in req/s between their repeats, so read "
                "them with care: grpc/unary (14.8 %)"
            ],
        )
        self.assertEqual(page["ranges"][1], {"rps": [600.0, 700.0], "p99": [48.293, 48.293]})
        table = page["tables"]["runs"]
        self.assertEqual(table["heads"][3:7], ["req/s", "req/s range", "p99 range", "spread: req/s · p99"])
        self.assertEqual(
            table["rows"][0]["cells"][3:7], ["1,433.77", "1,400.00 – 1,450.00", "187.0 ms – 187.0 ms", "3.5 % · 0.0 %"]
        )
        self.assertEqual(table["rows"][1]["cells"][6], {"text": "14.8 % · 0.0 %", "class": "below-goal"})
        self.assertIn("median of 3 interleaved repeats", report_texts(data, '<p class="subtitle" id="subtitle">')[0])
        self.assertEqual(page["cards"][1]["rows"][0], ["spread of 3: req/s · p99", "14.8 % · 0.0 %", "below-goal"])

    def test_the_summary_marks_the_unsteady_run_in_bold(self):
        text = report.summary_markdown(self.results())

        self.assertIn("| 676.51 | 600.00 – 700.00 | 48.3 ms – 48.3 ms | **14.8 % · 0.0 %** |", text)


class SettingsTests(unittest.TestCase):
    def test_three_interleaved_repeats_of_a_closed_loop_by_default(self):
        settings = Settings.from_env({})

        self.assertEqual((settings.repeats, settings.load, settings.rate, settings.duration_s), (3, "closed", [50], 20))
        self.assertEqual(settings.combinations()[0], ("rest/unary", "small", 1000, 100))

    def test_an_open_loop_sweeps_its_rates_and_has_no_floor(self):
        settings = Settings.from_env({"LOAD": "open", "RATE": "50 100", "DURATION": "5", "PATHS": "grpc/stream"})

        self.assertEqual(
            settings.combinations(), [("grpc/stream", "small", 1000, 50), ("grpc/stream", "small", 1000, 100)]
        )
        self.assertFalse(settings.floor)
        recorded = settings.as_dict()
        self.assertEqual(
            (recorded["load"], recorded["rate"], recorded["duration_s"], recorded["requests"]),
            ("open", [50, 100], 5.0, None),
        )

    def test_bad_values_say_what_is_wrong(self):
        for env, message in [
            ({"LOAD": "half"}, "LOAD must be one of closed, open, knee, got 'half'"),
            ({"RATE": "50 50"}, "RATE must not repeat a value"),
            ({"RATE": "0"}, "RATE must be at least 1, got 0"),
            ({"REPEATS": "0"}, "REPEATS must be at least 1, got 0"),
            ({"DURATION": "0"}, "DURATION must be more than 0, got '0'"),
        ]:
            with self.subTest(env=env):
                with self.assertRaises(SettingsError) as caught:
                    Settings.from_env(env)
                self.assertEqual(str(caught.exception), message)


class ComparisonsTests(unittest.TestCase):
    def test_each_measured_pair_gives_its_ratio_of_req_per_second_and_of_cpu_per_call(self):
        runs = sample_results()["runs"]
        rest, grpc_unary, stream = runs
        h2c = dict(copy.deepcopy(rest), path="rest/h2c", rps=rest["rps"] * 1.5)
        pingpong = dict(copy.deepcopy(stream), path="grpc/pingpong", rps=grpc_unary["rps"] / 2)

        table = view.comparisons_table([rest, h2c, grpc_unary, pingpong, stream])

        self.assertEqual(
            [row["cells"][:2] + [row["cells"][4]] for row in table["rows"]],
            [
                ["REST: HTTP/2 multiplexed against HTTP/1.1", "rest/h2c ÷ rest/unary", "1.50×"],
                ["gRPC unary against REST over HTTP/1.1", "grpc/unary ÷ rest/unary", "0.47×"],
                [
                    "gRPC unary against REST over HTTP/2: the framing, on the same protocol",
                    "grpc/unary ÷ rest/h2c",
                    "0.31×",
                ],
                ["gRPC: one stream, one message at a time, against unary calls", "grpc/pingpong ÷ grpc/unary", "0.50×"],
                ["gRPC: one stream pipelined against one message at a time", "grpc/stream ÷ grpc/pingpong", "0.49×"],
            ],
        )
        self.assertEqual(
            table["heads"], ["comparison", "paths", "n", "concurrency", "req/s ratio", "CPU per call ratio"]
        )

    def test_without_a_pair_there_is_no_table(self):
        self.assertIsNone(view.comparisons_table(sample_results()["runs"][2:]))


if __name__ == "__main__":
    unittest.main()


class AddUpTests(unittest.TestCase):
    """A repeat measured in parts (lab.measure.bench.add_up): one record as if its parts had been one run."""

    def part(self, completed, seconds, cpu_s, rss, square_us, curve_shift):
        run = copy.deepcopy(json.loads(fixture("results/default-run.json"))["runs"][0])
        run.update(completed=completed, requests=completed, time_taken_s=seconds, rps=round(completed / seconds, 2))
        run["verified"].update(length_checked=completed, passed=completed)
        for name, entry in run["cpu"].items():
            entry.update(seconds=cpu_s.get(name, 0.0), percent=round(cpu_s.get(name, 0.0) / seconds * 100, 1))
        run["rss_mb"]["aggregator-service"] = rss
        run["server_side"].update(square_calls=completed * 1000, square_us_per_call=square_us)
        run["bytes_per_call"].update(square_calls=completed * 1000, request=100.0 + curve_shift)
        run["latency_curve_ms"] = [value + curve_shift for value in run["latency_curve_ms"]]
        return run

    def test_counts_cpu_and_time_add_up_and_are_read_per_request_again(self):
        rest = catalogue.ALL["rest/unary"]
        first = self.part(300, 7.5, {"aggregator-service": 6.0, "machine": 15.0}, 300.0, 70.0, 0.0)
        second = self.part(200, 5.0, {"aggregator-service": 5.0, "machine": 10.0}, 320.0, 80.0, 100.0)

        whole = bench.add_up(rest, 1000, [first, second])

        self.assertEqual((500, 12.5, 40.0), (whole["completed"], whole["time_taken_s"], whole["rps"]))
        self.assertEqual(500, whole["requests"])
        self.assertEqual(
            {"seconds": 11.0, "percent": 88.0, "ms_per_request": 22.0, "us_per_call": 22.0},
            whole["cpu"]["aggregator-service"],
        )
        self.assertEqual(500 * 1000, whole["downstream_calls"])
        self.assertEqual(320.0, whole["rss_mb"]["aggregator-service"])
        self.assertEqual(500, whole["verified"]["passed"])
        self.assertEqual(
            (500000, 74.0), (whole["server_side"]["square_calls"], whole["server_side"]["square_us_per_call"])
        )
        self.assertEqual(140.0, whole["bytes_per_call"]["request"])
        # The merged curve lies between the parts' curves, nearer the part with more requests.
        middle = whole["latency_curve_ms"][50]
        self.assertLess(first["latency_curve_ms"][50], middle)
        self.assertLess(middle, second["latency_curve_ms"][50])
        self.assertEqual(whole["latency_curve_ms"][50], whole["latency_ms"]["p50"])
        self.assertEqual(2, whole["parts"])
        self.assertEqual([first["raw"]["report"], second["raw"]["report"]], whole["raw"]["parts"])
        # Each part's own figures, the samples a comparison of two runs tests.
        self.assertEqual(
            [(40.0, first["latency_ms"]["p99"])] * 2, [(p["rps"], p["p99"]) for p in whole["part_figures"]]
        )

    def test_a_part_with_an_error_makes_the_repeat_s_record(self):
        good = self.part(300, 7.5, {"machine": 15.0}, 300.0, 70.0, 0.0)
        failed = {"path": "rest/unary", "error": "ab exited with code 1"}
        self.assertIs(failed, bench.add_up(catalogue.ALL["rest/unary"], 1000, [good, failed]))


class OnePartTests(unittest.TestCase):
    """A path whose one round of requests outlasts a part fills its repeat in one part: an ordinary record, which
    goes through the schema, the check, the verdict and the report like any other."""

    def test_a_repeat_of_one_part_is_complete_beside_repeats_of_four(self):
        rest = catalogue.ALL["rest/unary"]
        make = AddUpTests().part
        slow = make(100, 12.0, {"aggregator-service": 6.0, "machine": 15.0}, 300.0, 70.0, 0.0)
        one = bench.add_up(rest, 1000, [slow])
        self.assertEqual((1, 1), (one["parts"], one["rounds"]))
        four = bench.add_up(
            rest, 1000, [make(100, 5.0, {"aggregator-service": 2.5, "machine": 6.0}, 300.0, 70.0, 0.0)] * 4
        )
        self.assertEqual((4, 4), (four["parts"], four["rounds"]))

        data = json.loads(fixture("results/default-run.json"))
        data["settings"]["parts"] = 4
        run = repeats.combine([one, four, four], bench.repeat_summary)
        data["runs"][0] = dict(run, stack=data["runs"][0].get("stack"))
        data["runs"][0].pop("floor", None)

        self.assertEqual([], results.violations(data))
        # The parts' figures stay with their repeats: a median of them over the repeats would mean nothing.
        self.assertNotIn("part_figures", run)
        self.assertEqual([1, 4, 4], [len(repeat["part_figures"]) for repeat in run["repeats"]])
        self.assertEqual(4, data["runs"][0]["parts"])
        self.assertEqual([1, 4, 4], [repeat["parts"] for repeat in data["runs"][0]["repeats"]])
        self.assertEqual([1, 4, 4], [repeat["rounds"] for repeat in data["runs"][0]["repeats"]])
        self.assertNotIn(
            "parts", " ".join(problem for problem in check_results.problems(data) if "rest/unary" in problem)
        )
        self.assertTrue(verdict.sentences(data))
        less = view.view(data)["alerts"]["less_certain"]
        self.assertEqual("rest/unary", less[0][0])
        self.assertIn("its repeats took 1/4/4 part(s) of 1/4/4 round(s)", less[0][1])
        self.assertIn("its repeats took 1/4/4 part(s)", report.summary_markdown(data))
        table = view.runs_table(data["runs"])
        column = table["heads"].index("each repeat: parts × rounds")
        self.assertEqual("1 × 1, 4 × 4, 4 × 4", table["rows"][0]["cells"][column])
        self.assertIn("its repeats took 1/4/4 part(s)", report.render(data, "", ""))

    def test_the_parts_still_to_come_follow_the_round_time(self):
        # Rounds of 20 s against parts of 5 s: the first part takes the repeat, the others are skipped.
        self.assertEqual([20.0, 0.0, 0.0, 0.0], bench.part_plan(20.0, 4, 20.0))
        # Rounds of 12 s: part 1 takes one, part 2 is filled already, part 3 (15 - 12 = 3 s) takes one more.
        self.assertEqual([12.0, 0.0, 12.0, 0.0], bench.part_plan(20.0, 4, 12.0))
        # Rounds of 7 s: a round each for parts 1 to 3 (5, 3 and 1 s to fill), none for part 4.
        self.assertEqual([7.0, 7.0, 7.0, 0.0], bench.part_plan(20.0, 4, 7.0))
        # Rounds of a few milliseconds fill each part to within a round.
        self.assertEqual([5.0, 5.0, 5.0, 5.0], bench.part_plan(20.0, 4, 0.005))


class PartsTextTests(unittest.TestCase):
    def test_the_summary_and_the_report_say_each_repeat_was_measured_in_parts_that_took_turns(self):
        data = sample_results()
        for run in data["runs"]:
            run["repeats"] = [dict(bench.repeat_summary(run), parts=4) for _ in range(3)]
        data["settings"]["repeats"] = 3
        said = "each repeat in 4 parts that took turns with the other repeats' and paths' parts"
        self.assertIn(said, report.summary_markdown(data))
        self.assertIn("Each repeat was measured in 4 parts", report.render(data, "", ""))

    def test_repeats_in_one_stretch_say_nothing_of_parts(self):
        data = sample_results()
        data["settings"]["repeats"] = 3
        self.assertNotIn("parts that took turns", report.summary_markdown(data))
