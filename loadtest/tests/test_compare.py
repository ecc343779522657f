"""Two runs compared (lab.results.compare, `--compare`, BASELINE): the test, the decisions, the differences said first,
and gates that name the baseline."""

import copy
import os
import subprocess
import sys
import tempfile
import unittest

from lab.core import gates
from lab.core.errors import SettingsError
from lab.core.settings import Settings
from lab.results import compare, results
from lab.results import gates as judged

from .support import FIXTURES, sample_results, sample_with_floor

LAB_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def in_parts(data, rps_by_path, spread=2.0):
    """data with each run measured in 3 repeats of 4 parts, around the req/s given per path (rest/unary: 1000 ...)."""
    for run in data["runs"]:
        base = rps_by_path[run["path"]]
        run["repeats"] = [
            {
                "rps": base,
                "latency_ms": run["latency_ms"],
                "cpu_us_per_call": 10.0,
                "part_figures": [
                    {
                        "rps": base * (1 + (r * 4 + p - 6) / 1000),
                        "p99": 100.0 + r + p,
                        "cpu_us_per_call": 10.0 + p / 100,
                    }
                    for p in range(4)
                ],
            }
            for r in range(3)
        ]
        run["rps"] = base
        run["spread"] = {"rps": spread, "p99": spread, "cpu_us_per_call": spread}
    return data


class MannWhitneyTests(unittest.TestCase):
    def test_the_exact_p_value_of_samples_without_ties(self):
        # Every value of one above the other: 2 orderings of C(10, 5) = 252.
        self.assertAlmostEqual(compare.mann_whitney_p([1, 2, 3, 4, 5], [6, 7, 8, 9, 10]), 2 / 252)
        self.assertAlmostEqual(compare.mann_whitney_p([6, 7, 8, 9, 10], [1, 2, 3, 4, 5]), 2 / 252)
        # U = 1 of 9 for 3 and 3: P(U <= 1) = 2/20, two-sided 0.2.
        self.assertAlmostEqual(compare.mann_whitney_p([1, 2, 4], [3, 5, 6]), 0.2)
        self.assertEqual(compare.mann_whitney_p([1, 4, 5], [2, 3, 6]), 1.0)
        self.assertAlmostEqual(compare.smallest_p(3, 3), 0.1)

    def test_ties_take_the_normal_approximation_and_identical_samples_are_no_change(self):
        self.assertEqual(compare.mann_whitney_p([5, 5, 5], [5, 5, 5]), 1.0)
        self.assertLess(compare.mann_whitney_p([1, 1, 2, 2, 3, 3] * 2, [7, 7, 8, 8, 9, 9] * 2), 0.001)


class CompareTests(unittest.TestCase):
    def test_a_run_slower_beyond_the_noise_is_slower_and_the_same_run_is_no_change(self):
        before = in_parts(sample_results(), {"rest/unary": 1000.0, "grpc/unary": 2000.0, "grpc/stream": 3000.0})
        slower = in_parts(sample_results(), {"rest/unary": 800.0, "grpc/unary": 2000.0, "grpc/stream": 3045.0})

        found = compare.compare(before, slower, ("main", "change"))

        rest, grpc, stream = found["rows"]
        self.assertEqual((rest["run"], rest["verdict"]), ("rest/unary n=1000 c=100", "slower by 20.0 % (significant)"))
        self.assertEqual(rest["figures"]["rps"]["samples"], [12, 12])
        self.assertLess(rest["figures"]["rps"]["p"], 0.001)
        self.assertEqual(rest["figures"]["rps"]["decision"], "worse")
        self.assertEqual(grpc["verdict"], "no change beyond the noise")
        # 1.5 % faster, and significantly, but less than two runs of one commit drift apart: not a change.
        self.assertEqual(
            stream["verdict"],
            "no change beyond the noise (req/s +1.5 %: significant, but within the 10 % runs drift apart)",
        )
        self.assertEqual(rest["figures"]["rss_mb"]["decision"], "one figure per run: no test")
        self.assertEqual((found["old"]["folder"], found["new"]["folder"], found["differences"]), ("main", "change", []))

    def test_three_repeats_of_one_part_are_too_few_to_tell(self):
        before, after = sample_results(), sample_results()
        for data, factor in ((before, 1.0), (after, 0.5)):
            for run in data["runs"]:
                run["repeats"] = [{"rps": run["rps"] * factor * (1 + i / 100)} for i in range(3)]

        rows = compare.compare(before, after)["rows"]

        self.assertEqual({row["verdict"] for row in rows}, {"too few samples to tell (3 and 3)"})

    def test_runs_on_another_jdk_or_with_other_runs_say_so_first(self):
        before, after = sample_results(), sample_results()
        after["environment"]["jdk"] = 'openjdk version "25.0.1"'
        after["settings"]["java_opts"] = "-XX:TieredStopAtLevel=1"
        after["runs"] = after["runs"][:2] + [dict(after["runs"][2], n=10)]

        found = compare.compare(before, after)

        self.assertEqual(
            found["differences"],
            [
                'JDK: openjdk version "17.0.15", then openjdk version "25.0.1"',
                "JAVA_OPTS: -XX:+UseParallelGC -Xms64m -Xmx256m, then -XX:TieredStopAtLevel=1",
            ],
        )
        self.assertEqual(
            (found["only_old"], found["only_new"]), (["grpc/stream n=1000 c=100"], ["grpc/stream n=10 c=100"])
        )

    def test_a_floor_that_moved_says_the_machine_changed_speed(self):
        before, after = sample_with_floor(), sample_with_floor()
        self.assertEqual(compare.differences(before, after), [])
        for run in after["floor"]["runs"]:
            run["calls_per_second"] *= 0.75 if run["transport"] == "grpc_unary" else 0.95

        said = compare.differences(before, after)

        self.assertEqual(len(said), 1)
        opening = (
            "the machine: the bare transports of the floor, no service code, moved by -25.0 % (grpc_unary), -5.0 % ("
        )
        self.assertTrue(said[0].startswith(opening), said[0])
        self.assertTrue(said[0].endswith("between the runs, so the paths' changes below may be the machine's"))

    def test_the_command_writes_the_comparison_into_the_newer_folder_and_prints_it(self):
        old, new = tempfile.mkdtemp(), tempfile.mkdtemp()
        results.write_json(
            old, in_parts(sample_results(), {"rest/unary": 1000.0, "grpc/unary": 2000.0, "grpc/stream": 3000.0})
        )
        results.write_json(
            new, in_parts(sample_results(), {"rest/unary": 1000.0, "grpc/unary": 1500.0, "grpc/stream": 3000.0})
        )

        done = subprocess.run(
            [sys.executable, "-m", "lab", "compare", old, new],
            env=dict(os.environ, PYTHONPATH=LAB_DIR),
            capture_output=True,
            text=True,
            cwd=LAB_DIR,
        )

        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertIn("- grpc/unary n=1000 c=100: slower by 25.0 % (significant).", done.stdout)
        self.assertIn("- rest/unary n=1000 c=100: no change beyond the noise.", done.stdout)
        with open(os.path.join(new, "comparison.md"), encoding="utf-8") as written:
            self.assertIn(
                "| grpc/unary n=1000 c=100 | slower by 25.0 % (significant) "
                "| 1,999 → 1,499 (-25.0 %, p = 0.000, worse) |",
                written.read(),
            )
        self.assertTrue(os.path.isfile(os.path.join(new, "comparison.json")))


class RealRunsTests(unittest.TestCase):
    """Three real small runs of one commit, one after the other on a 2-core machine (PATHS="rest/unary grpc/unary"
    N=100 CONCURRENCY=10 REPEATS=3 DURATION=10 WARMUP_SECONDS=20, 6 parts a side): two alike, and one whose services
    ran on C1 only (JAVA_OPTS plus -XX:TieredStopAtLevel=1), a deliberately slowed stack (fixtures/compare)."""

    def test_two_runs_of_one_commit_are_no_change(self):
        found = compare.compare(real("first"), real("second"))

        self.assertEqual(found["differences"], [])
        self.assertEqual([row["verdict"] for row in found["rows"]], ["no change beyond the noise"] * 2)
        self.assertEqual([row["figures"]["rps"]["samples"] for row in found["rows"]], [[6, 6], [6, 6]])

    def test_services_slowed_to_c1_are_slower_beyond_the_noise_and_it_says_why_they_differ(self):
        found = compare.compare(real("second"), real("c1-only"))

        self.assertEqual(found["differences"], ["JAVA_OPTS: added -XX:TieredStopAtLevel=1"])
        self.assertEqual(
            [row["verdict"] for row in found["rows"]],
            ["slower by 70.2 % (significant)", "slower by 63.6 % (significant)"],
        )
        self.assertEqual({row["figures"]["cpu_us_per_call"]["decision"] for row in found["rows"]}, {"worse"})
        # Every part of one below every part of the other: the smallest p-value 6 and 6 samples can give.
        self.assertEqual({row["figures"]["rps"]["p"] for row in found["rows"]}, {round(compare.smallest_p(6, 6), 4)})


def real(name):
    return results.read_json(os.path.join(FIXTURES, "compare", name))


class BaselineGateTests(unittest.TestCase):
    def test_a_gate_on_the_baseline_compares_each_run_with_its_twin_in_the_baseline(self):
        baseline = in_parts(sample_results(), {"rest/unary": 1000.0, "grpc/unary": 2000.0, "grpc/stream": 3000.0})
        data = in_parts(sample_results(), {"rest/unary": 900.0, "grpc/unary": 2000.0, "grpc/stream": 3000.0})
        data["runs"].append(dict(copy.deepcopy(data["runs"][1]), n=10))

        judged.record(data, "*.rps >= 0.95 * baseline", baseline)

        gate = data["gates"][0]
        self.assertFalse(gate["met"])
        self.assertEqual(
            [(check["run"], check["met"], check.get("right")) for check in gate["checks"]],
            [
                ("rest/unary n=1000 c=100", False, 950.0),
                ("grpc/unary n=1000 c=100", True, 1900.0),
                ("grpc/stream n=1000 c=100", True, 2850.0),
                ("grpc/unary n=10 c=100", False, None),
            ],
        )
        self.assertEqual(gate["checks"][3]["why"], "the baseline did not measure grpc/unary n=10 c=100")
        self.assertEqual(results.violations(data), [])

    def test_a_gate_on_the_baseline_needs_one_that_holds_a_run(self):
        with self.assertRaises(SettingsError) as none:
            Settings.from_env({"EXPECT": "grpc/unary.rps >= 0.9 * baseline"})
        with self.assertRaises(SettingsError) as empty:
            Settings.from_env({"BASELINE": tempfile.mkdtemp()})

        self.assertEqual(
            str(none.exception),
            "EXPECT: 'grpc/unary.rps >= 0.9 * baseline' names the baseline: set BASELINE to a results folder",
        )
        self.assertIn("holds no results.json: name the folder of an earlier lab run", str(empty.exception))
        self.assertEqual(
            gates.parse("grpc/unary.p99 <= 1.1 * baseline")[0].right,
            gates.Side(1.1, gates.Reference("baseline", "p99")),
        )


if __name__ == "__main__":
    unittest.main()
