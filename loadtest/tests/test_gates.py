"""EXPECT's gates: read before anything starts (lab.core.gates), judged against results.json at the end of a run or
by `--report` (lab.results.gates), listed in summary.md, and a missed one is the run's exit status 99."""

import json
import os
import subprocess
import sys
import tempfile
import unittest

from lab.core import gates
from lab.core.errors import SettingsError, ToolMissing
from lab.core.settings import Settings
from lab.experiments import run
from lab.host import tools
from lab.results import gates as judged
from lab.results import report, results

from .support import sample_results
from .test_report import unavailable

LAB_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def with_gates(data, expect):
    data["settings"]["expect"] = [gate.text for gate in gates.parse(expect)]
    data["gates"] = judged.judge(data)
    return data["gates"]


def with_repeats(run, rps_values):
    """The run measured in repeats of these req/s (median first), each with the run's other figures."""
    run["repeats"] = [dict(rps=rps, latency_ms=run["latency_ms"], cpu_us_per_call=1.0) for rps in rps_values]
    run["rps"] = rps_values[0]


class ParseTests(unittest.TestCase):
    def test_a_gate_reads_a_figure_against_a_number_in_its_unit_or_against_another_paths_figure(self):
        ratio, latency, every, seconds = gates.parse(
            "grpc/unary.rps >= 2 * rest/unary.rps; grpc/stream.p99 <= 500ms;*.failed == 0 ; rest/unary.max < 1.5s"
        )

        self.assertEqual(ratio.subject, gates.Reference("grpc/unary", "rps"))
        self.assertEqual((ratio.operator, ratio.right), (">=", gates.Side(2.0, gates.Reference("rest/unary", "rps"))))
        self.assertEqual((latency.operator, latency.right), ("<=", gates.Side(500.0)))
        self.assertEqual((every.subject.path, every.right), ("*", gates.Side(0.0)))
        self.assertEqual(seconds.right, gates.Side(1500.0))
        self.assertEqual(every.text, "*.failed == 0")

    def test_an_unknown_path_or_figure_is_refused_naming_what_it_accepts(self):
        with self.assertRaises(SettingsError) as path:
            gates.parse("grpc/unry.rps > 1")
        with self.assertRaises(SettingsError) as figure:
            gates.parse("grpc/unary.p98 <= 1s")

        self.assertEqual(
            str(path.exception),
            "EXPECT: 'grpc/unry.rps > 1' names grpc/unry, which is not a path; paths: rest/unary rest/h2c grpc/unary "
            "grpc/pingpong grpc/stream rest/square",
        )
        self.assertEqual(
            str(figure.exception),
            "EXPECT: 'grpc/unary.p98 <= 1s' names the figure p98; figures: rps p50 p90 p99 max cpu_us_per_call failed "
            "non2xx rss_mb",
        )

    def test_a_gate_that_cannot_be_judged_is_refused_saying_why(self):
        refusals = {
            "grpc/unary.rps": "has no comparison; use one of >= <= == > <",
            "grpc/unary.p99 <= 500 req": "p99 is in ms; a number compared with it takes ms or s",
            "grpc/unary.rps >= 100ms": "rps is in req/s; a number compared with it takes no unit",
            "rest/unary.rps <= *.rps": "`*` stands on the left side only",
            "grpc/unary.rps >= rest/unary.p99": "compares p99 with rps; compare a figure with itself",
            "500ms >= grpc/stream.p99": "put the figure on the left",
            "1 < 2": "compares two numbers",
            "grpc/unary.rps >= lots": "cannot read 'lots'",
        }
        for gate, why in refusals.items():
            with self.subTest(gate), self.assertRaises(SettingsError) as refused:
                gates.parse(gate)
            self.assertIn(why, str(refused.exception))

    def test_the_lab_refuses_a_gate_on_a_path_it_will_not_measure_before_it_starts_anything(self):
        with self.assertRaises(SettingsError) as refused:
            Settings.from_env({"PATHS": "rest/unary grpc/unary", "EXPECT": "grpc/stream.p99 <= 1s"})

        self.assertEqual(
            str(refused.exception),
            "EXPECT: 'grpc/stream.p99 <= 1s' names grpc/stream, which PATHS does not measure "
            "(PATHS: rest/unary grpc/unary)",
        )

    def test_results_json_records_the_gates_as_given(self):
        settings = Settings.from_env({"EXPECT": "grpc/unary.rps >= 2 * rest/unary.rps;  *.failed == 0"})

        self.assertEqual(settings.as_dict()["expect"], ["grpc/unary.rps >= 2 * rest/unary.rps", "*.failed == 0"])
        self.assertEqual(Settings.from_env({}).as_dict()["expect"], [])


class JudgeTests(unittest.TestCase):
    def test_a_gate_is_judged_against_the_medians_in_each_condition_and_a_star_on_each_path(self):
        data = sample_results(concurrency=(10, 100))

        ratio, every, latency = with_gates(
            data, "rest/unary.rps >= 2 * grpc/unary.rps; *.failed == 0; grpc/stream.p99 <= 100ms"
        )

        self.assertTrue(ratio["met"])
        self.assertEqual(
            [check["run"] for check in ratio["checks"]], ["rest/unary n=1000 c=10", "rest/unary n=1000 c=100"]
        )
        self.assertEqual((ratio["checks"][0]["left"], ratio["checks"][0]["right"]), (1433.77, 2 * 676.51))
        self.assertTrue(every["met"])
        self.assertEqual(len(every["checks"]), 6)
        self.assertFalse(latency["met"])
        self.assertEqual([(c["left"], c["right"], c["met"]) for c in latency["checks"]], [(125.655, 100.0, False)] * 2)
        self.assertEqual(results.violations(data), [])

    def test_a_gate_that_holds_only_within_the_repeats_ranges_says_so(self):
        data = sample_results()
        rest, grpc = data["runs"][0], data["runs"][1]
        with_repeats(rest, [1400.0, 1300.0, 1500.0])
        with_repeats(grpc, [650.0, 600.0, 760.0])

        clear, noisy, missed_noisy, missed = with_gates(
            data,
            "rest/unary.rps >= 1.5 * grpc/unary.rps; rest/unary.rps >= 2 * grpc/unary.rps; "
            "rest/unary.rps >= 2.2 * grpc/unary.rps; rest/unary.rps >= 3 * grpc/unary.rps",
        )

        self.assertEqual((clear["met"], clear["checks"][0]["within_noise"]), (True, False))
        self.assertEqual((noisy["met"], noisy["checks"][0]["within_noise"]), (True, True))
        self.assertEqual(noisy["checks"][0]["left_range"], [1300.0, 1500.0])
        self.assertEqual(noisy["checks"][0]["right_range"], [1200.0, 1520.0])
        self.assertEqual((missed_noisy["met"], missed_noisy["checks"][0]["within_noise"]), (False, True))
        self.assertEqual((missed["met"], missed["checks"][0]["within_noise"]), (False, False))

    def test_a_gate_no_condition_measured_or_on_a_failed_run_is_not_met_and_says_why(self):
        data = sample_results()
        data["runs"][2] = {key: data["runs"][2][key] for key in ("path", "n", "concurrency")}
        data["runs"][2]["error"] = "grpc/stream answered wrongly"

        nothing, failed_run = with_gates(data, "rest/h2c.rps > 1; grpc/stream.p99 <= 1s")

        self.assertEqual(
            nothing,
            {
                "gate": "rest/h2c.rps > 1",
                "met": False,
                "checks": [],
                "why": "no condition of this run measured rest/h2c",
            },
        )
        self.assertEqual(
            failed_run["checks"],
            [
                {
                    "run": "grpc/stream n=1000 c=100",
                    "met": False,
                    "why": "grpc/stream n=1000 c=100 failed: grpc/stream answered wrongly",
                }
            ],
        )

    def test_the_summary_lists_every_gate_met_or_missed_with_its_figures(self):
        data = sample_results()
        with_repeats(data["runs"][0], [1400.0, 1300.0, 1500.0])
        with_repeats(data["runs"][1], [650.0, 600.0, 760.0])
        with_gates(data, "rest/unary.rps >= 2 * grpc/unary.rps; grpc/stream.p99 <= 100ms; *.failed == 0")

        with tempfile.TemporaryDirectory() as folder, open(report.write_summary(folder, data), encoding="utf-8") as md:
            summary = md.read()

        self.assertIn("**Gates (EXPECT): 2 of 3 met; the run exits with status 99.**", summary)
        self.assertIn(
            "- ✓ `rest/unary.rps >= 2 * grpc/unary.rps`: met in 1 condition; on rest/unary n=1000 c=100 only within "
            "the noise (1,400 against 1,300, within the noise: the repeats ranged 1,300–1,500 against 1,200–1,520).",
            summary,
        )
        self.assertIn(
            "- ✗ `grpc/stream.p99 <= 100ms`: missed on grpc/stream n=1000 c=100 (126 against 100), of 1 condition.",
            summary,
        )
        self.assertIn("- ✓ `*.failed == 0`: met in 3 conditions.", summary)
        page = report.render(data, "", "")
        self.assertIn("<h2>Gates (EXPECT): 2 of 3 met; the run exits with status 99</h2>", page)
        self.assertIn('<li class="bad">✗ <code>grpc/stream.p99 &lt;= 100ms</code>: missed on grpc/stream', page)


class ExitStatusTests(unittest.TestCase):
    """The end of a real run (run.finish) and `--report` with EXPECT, on a results folder as the lab writes it."""

    def setUp(self):
        try:
            tools.ensure_scripts()
        except ToolMissing as missing:
            unavailable(self, str(missing))
        self.folder = tempfile.mkdtemp()
        results.write_json(self.folder, sample_results())

    def finish(self, expect):
        settings = Settings.from_env(
            {"EXPECT": expect, "PATHS": "rest/unary grpc/unary grpc/stream", "LAB_SKIP_BUILD": "1"}
        )
        return run.finish(self.folder, settings, 0)

    def test_a_run_that_meets_its_gates_exits_0_and_one_that_misses_one_exits_99(self):
        self.assertEqual(self.finish("grpc/stream.p99 <= 1s; *.non2xx == 0"), 0)
        self.assertEqual(self.finish("grpc/stream.p99 <= 100ms"), gates.GATES_FAILED)

        recorded = results.read_json(self.folder)
        self.assertEqual(
            [(gate["gate"], gate["met"]) for gate in recorded["gates"]], [("grpc/stream.p99 <= 100ms", False)]
        )
        self.assertEqual(gates.GATES_FAILED, 99)

    def test_a_failed_run_exits_1_whatever_its_gates(self):
        data = results.read_json(self.folder)
        results.add_failure(data, "the lab was stopped by SIGTERM")
        results.write_json(self.folder, data)

        self.assertEqual(self.finish("grpc/stream.p99 <= 100ms"), 1)

    def test_report_judges_the_gates_of_expect_against_a_folder_and_exits_99_when_one_is_missed(self):
        def report_with(expect):
            env = dict(os.environ, EXPECT=expect, PYTHONPATH=LAB_DIR)
            return subprocess.run(
                [sys.executable, "-m", "lab", "report", self.folder],
                env=env,
                capture_output=True,
                text=True,
                cwd=LAB_DIR,
            )

        missed, met, refused = (
            report_with(gate) for gate in ("rest/unary.rps >= 3 * grpc/unary.rps", "*.failed == 0", "x")
        )

        self.assertEqual(missed.returncode, 99, missed.stderr)
        self.assertIn("[lab] GATE MISSED: rest/unary.rps >= 3 * grpc/unary.rps", missed.stderr)
        self.assertEqual(met.returncode, 0, met.stderr)
        with open(os.path.join(self.folder, "results.json"), encoding="utf-8") as recorded:
            self.assertEqual(json.load(recorded)["gates"][0]["gate"], "*.failed == 0")
        self.assertEqual(refused.returncode, 1)
        self.assertIn("[lab] ERROR: EXPECT: 'x' has no comparison", refused.stderr)


if __name__ == "__main__":
    unittest.main()
