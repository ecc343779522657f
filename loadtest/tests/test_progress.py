import time
import unittest

from lab.core.settings import Settings
from lab.measure import progress


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def settings(**env) -> Settings:
    return Settings.from_env(
        dict({"PATHS": "rest/unary grpc/unary", "REPEATS": "2", "WARMUP_SECONDS": "10", "FLOOR": "0"}, **env)
    )


class PlanTests(unittest.TestCase):
    def test_the_plan_follows_the_rounds_with_warm_ups_in_the_first(self):
        steps = progress.plan(settings(LOAD="open", RATE="50", DURATION="20"), ["netty"], [])
        self.assertEqual(
            [step.label for step in steps],
            [
                "starting the square services",
                "starting the aggregator and checking every path",
                "warming up rest/unary n=1000 rate=50",
                "warming up grpc/unary n=1000 rate=50",
                "measuring rest/unary n=1000 rate=50, round 1 of 2",
                "measuring grpc/unary n=1000 rate=50, round 1 of 2",
                "measuring rest/unary n=1000 rate=50, round 2 of 2",
                "measuring grpc/unary n=1000 rate=50, round 2 of 2",
            ],
        )
        self.assertEqual([step.expected_s for step in steps], [20.0, 15.0, 12.0, 12.0, 22.0, 22.0, 22.0, 22.0])

    def test_a_closed_loop_by_time_measures_each_repeat_in_parts_that_take_turns(self):
        steps = progress.plan(settings(), ["netty"], [])
        measures = [step for step in steps if step.kind == "measure"]
        self.assertEqual(2 * 2 * 4, len(measures))
        # In the order lab.core.repeats.turns measures them: backward, then forward, the last part forward.
        self.assertEqual("measuring rest/unary n=1000 c=100, round 2 of 2, part 1 of 4", measures[0].label)
        self.assertEqual("measuring rest/unary n=1000 c=100, round 1 of 2, part 1 of 4", measures[2].label)
        self.assertEqual("measuring rest/unary n=1000 c=100, round 1 of 2, part 2 of 4", measures[4].label)
        self.assertEqual("measuring rest/unary n=1000 c=100, round 2 of 2, part 3 of 4", measures[8].label)
        self.assertEqual({5.0 + 2.0}, {step.expected_s for step in measures})

    def test_a_fixed_count_of_requests_is_unknown_until_measured(self):
        steps = progress.plan(settings(REQUESTS="1000"), ["netty"], ["rest/unary", "grpc/unary"])
        measures = [step for step in steps if step.kind == "measure"]
        self.assertTrue(all(step.expected_s is None for step in measures))
        # The floor: each window warmed up, then 2 repeats of 4 parts of 10 s / 4 each.
        warm_ups = [step for step in steps if step.kind == "floor-warm-up"]
        self.assertEqual([10 * 1.5 + 3.0] * 2, [step.expected_s for step in warm_ups])
        floors = [step for step in steps if step.kind == "floor"]
        self.assertEqual(len(floors), 2 * 2 * 4)
        self.assertEqual(floors[0].expected_s, 10 / 4 + 1.0)
        self.assertEqual("the floor: grpc/unary, round 2 of 2, part 1 of 4", floors[1].label)
        self.assertEqual("the floor: grpc/unary, round 2 of 2, part 4 of 4", floors[-1].label)


class ProgressTests(unittest.TestCase):
    def test_a_line_says_the_step_the_share_done_and_the_time_left(self):
        clock = FakeClock()
        steps = [
            progress.Step(("start",), "starting", expected_s=20.0),
            progress.Step(("measure", "a", 1), "measuring a", ("a",), 30.0),
            progress.Step(("measure", "a", 2), "measuring a again", ("a",), 30.0),
        ]
        tracker = progress.Progress(steps, clock=clock)
        tracker.begin(("start",))
        clock.now += 20
        tracker.begin(("measure", "a", 1))
        clock.now += 10
        # 30 s elapsed; 20 s left of this step and 30 of the next: 50 s left, 38 % done.
        self.assertEqual(
            tracker.line(), "[lab] 38 % done, about 50 s left (30 s elapsed): measuring a, 10s of about 30s"
        )

    def test_an_unknown_step_is_expected_to_take_what_its_combination_took_last(self):
        clock = FakeClock()
        steps = [
            progress.Step(("measure", "a", 1), "a, round 1", ("a",)),
            progress.Step(("measure", "b", 1), "b, round 1", ("b",)),
            progress.Step(("measure", "a", 2), "a, round 2", ("a",)),
            progress.Step(("measure", "b", 2), "b, round 2", ("b",)),
        ]
        tracker = progress.Progress(steps, clock=clock)
        self.assertEqual(tracker.expected(0), progress.UNKNOWN_STEP_S)
        tracker.begin(("measure", "a", 1))
        clock.now += 40
        tracker.begin(("measure", "b", 1))
        # b has not run yet: the average of the measured runs so far.
        self.assertEqual(tracker.expected(1), 40)
        clock.now += 100
        tracker.begin(("measure", "a", 2))
        self.assertEqual(tracker.expected(2), 40)
        self.assertEqual(tracker.expected(3), 100)
        self.assertEqual(
            tracker.line(), "[lab] 50 % done, about 2 min 20 s left (2 min 20 s elapsed): a, round 2, 0s of about 40s"
        )

    def test_the_estimate_follows_the_rounds_a_slow_path_takes_and_drops_the_parts_it_skips(self):
        clock = FakeClock()
        plan = [
            progress.Step(("measure", "a", repeat, part), "a %d.%d" % (repeat, part), ("a",), 7.0)
            for repeat in (1, 2)
            for part in (1, 2)
        ]
        tracker = progress.Progress(plan, clock=clock)
        tracker.begin(("measure", "a", 1, 1))
        clock.now += 22
        # Its round took 20 s: each repeat is one part of about 22 s, its second parts are skipped.
        for repeat in (1, 2):
            tracker.expect(("measure", "a", repeat, 1), 22.0)
            tracker.expect(("measure", "a", repeat, 2), 0.0)
        tracker.skip(("measure", "a", 1, 2))
        self.assertIn("about 22 s left (22 s elapsed)", tracker.line())
        self.assertEqual("during a 1.1, after 22 s", tracker.where())

    def test_a_step_outside_the_plan_is_added_where_the_run_is(self):
        clock = FakeClock()
        tracker = progress.Progress([progress.Step(("report",), "the report", expected_s=5.0)], clock=clock)
        tracker.begin(("floor", 7, 1), "the floor: window 7, round 1")
        self.assertEqual([step.label for step in tracker.steps], ["the floor: window 7, round 1", "the report"])
        clock.now += 3
        self.assertIn("the floor: window 7, round 1, 3s of about 15s", tracker.line())

    def test_lines_come_every_period_while_the_run_lasts(self):
        lines = []
        with progress.Progress(
            [progress.Step(("a",), "a", expected_s=1.0)], log=lines.append, period_s=0.02
        ) as tracker:
            tracker.begin(("a",))
            deadline = time.monotonic() + 5
            while len(lines) < 2 and time.monotonic() < deadline:
                time.sleep(0.005)
        count = len(lines)
        self.assertGreaterEqual(count, 2)
        self.assertTrue(all(line.startswith("[lab] ") for line in lines))
        # Stopped with the run: no line after it.
        time.sleep(0.05)
        self.assertEqual(len(lines), count)


if __name__ == "__main__":
    unittest.main()
