"""A run's record, summary.md and the CI check, built from the real ab fixtures."""

import contextlib
import copy
import io
import json
import os
import tempfile
import unittest

from lab import bench, check_results, paths, results
from tests.support import ab_fixture, cpu_usage, sample_results


class RunRecordTests(unittest.TestCase):

    def record(self):
        report, curve = ab_fixture("ab-rest-square-c100")
        usage = cpu_usage({"aggregator-service": 2.0, "square-rest-service": 1.0, "ab": 0.1, "machine": 3.5,
                           "other": 0.4}, wall_s=1.0)
        return bench.figures(paths.ALL["rest/unary"], 1000, report, curve, usage,
                             {"aggregator-service": 200.0, "square-rest-service": 150.0})

    def test_percentiles_come_from_the_csv_curve_and_the_mean_from_ab(self):
        self.assertEqual(self.record()["latency_ms"],
                         {"mean": 69.746, "p50": 57.664, "p90": 112.315, "p99": 187.001, "max": 219.952})

    def test_cpu_per_request_and_per_downstream_call(self):
        cpu = self.record()["cpu"]["aggregator-service"]

        # 2 s over 1000 requests of n = 1000 squares: 2 ms a request, 2 us a square call.
        self.assertEqual(cpu, {"seconds": 2.0, "percent": 200.0, "ms_per_request": 2.0, "us_per_call": 2.0})

    def test_keeps_abs_printed_table_and_counts(self):
        record = self.record()

        self.assertEqual(record["latency_table_ms"]["99"], 187)
        self.assertEqual((record["completed"], record["failed"], record["non2xx"], record["rps"]), (1000, 0, 0, 1433.77))
        self.assertEqual(record["downstream_calls"], 1000 * 1000)

    def test_without_a_csv_the_printed_table_gives_the_percentiles(self):
        report, _ = ab_fixture("ab-rest-square-c100")

        self.assertEqual(bench.latency(report, None),
                         {"mean": 69.746, "p50": 58, "p90": 112, "p99": 187, "max": 220})


class SummaryTests(unittest.TestCase):

    def test_one_row_per_run_with_cpu_per_service(self):
        table = results.summary_table(sample_results()).splitlines()

        self.assertEqual(table[0], "| path | n | concurrency | req/s | p50 ms | p90 ms | p99 ms | max ms | "
                                   "CPU aggregator-service | CPU square-rest-service | CPU square-grpc-service | failed |")
        self.assertEqual(len(table), 2 + 3)
        self.assertTrue(table[2].startswith("| rest/unary | 1000 | 100 | 1433.77 | 57.7 | 112.3 | 187.0 | 220.0 | "))

    def test_the_markdown_names_the_machine_and_flags_failures(self):
        data = sample_results()
        data["runs"][1]["non2xx"] = 200

        text = results.summary_markdown(data)

        self.assertIn("AMD EPYC (fixture), 2 cores, 23.5 GiB", text)
        self.assertIn("CPU % is of one core (2 cores = 200 %)", text)
        self.assertIn("- grpc/unary n=1000 c=100: 200 non-2xx responses", text)


class ServerSideSummaryTests(unittest.TestCase):

    def test_a_second_table_with_the_services_own_counts_and_times(self):
        data = sample_results()
        data["runs"][1]["server_side"] = {"error": "no server-side figures: cannot read x"}

        table = results.server_side_table(data).splitlines()

        self.assertEqual(table[0], "| path | n | concurrency | aggregator requests | aggregator ms/request | "
                                   "downstream calls | client µs/call | square calls | square µs/call |")
        self.assertEqual(table[2], "| rest/unary | 1000 | 100 | 1000 | 250.00 | 1000000 | 1900.0 | 1000000 | 40.0 |")
        self.assertEqual(table[3], "| grpc/unary | 1000 | 100 | no server-side figures: cannot read x |  |  |  |  |  |")
        # The stream's server time is an upper bound, and marked so.
        self.assertEqual(table[4], "| grpc/stream | 1000 | 100 | 200 | 250.00 | 200000 | 2000.0 | 200000 | ≤ 300.0 |")
        self.assertIn("## Server side", results.summary_markdown(data))

    def test_older_results_without_server_side_figures_have_no_second_table(self):
        data = sample_results()
        for run in data["runs"]:
            del run["server_side"]

        self.assertEqual(results.server_side_table(data), "")
        self.assertNotIn("## Server side", results.summary_markdown(data))


class CheckResultsTests(unittest.TestCase):

    def test_a_clean_complete_run_passes(self):
        self.assertEqual(check_results.problems(sample_results()), [])

    def test_failures_missing_paths_disorder_and_missing_cpu_fail(self):
        data = sample_results()
        data["runs"][0]["failed"] = 3
        data["runs"][1]["latency_ms"]["p90"] = 1e9
        data["runs"][2]["cpu"]["square-grpc-service"]["seconds"] = 0.0
        data["settings"]["paths"].append("rest/square")
        data["finished_at"] = None

        found = check_results.problems(data)

        self.assertIn("rest/unary n=1000 c=100: 3 failed requests", found)
        self.assertTrue(any("grpc/unary n=1000 c=100: percentiles out of order" in p for p in found))
        self.assertIn("grpc/stream n=1000 c=100: no CPU seconds recorded for square-grpc-service, "
                      "which served this path", found)
        self.assertIn("no run for path rest/square n=1000 concurrency=100", found)
        self.assertIn("the lab did not finish (finished_at is empty)", found)

    def test_an_unverified_run_or_an_ab_error_fails(self):
        data = sample_results()
        data["runs"][0]["verified"] = False
        data["runs"][1] = {key: data["runs"][1][key] for key in ("path", "n", "concurrency", "requests")}
        data["runs"][1]["error"] = "ab exited with code 1: apr_pollset_poll: The timeout specified has expired"

        found = check_results.problems(data)

        self.assertIn("rest/unary n=1000 c=100: the answer was not verified", found)
        self.assertIn("grpc/unary n=1000 c=100: ab exited with code 1: apr_pollset_poll: "
                      "The timeout specified has expired", found)

    def test_the_command_reads_a_results_folder(self):
        with tempfile.TemporaryDirectory() as folder, contextlib.redirect_stdout(io.StringIO()), \
                contextlib.redirect_stderr(io.StringIO()) as errors:
            results.write_json(folder, sample_results())
            self.assertEqual(check_results.main([folder]), 0)
            broken = copy.deepcopy(sample_results())
            broken["runs"].pop()
            results.write_json(folder, broken)
            self.assertEqual(check_results.main([folder]), 1)
            self.assertIn("FAIL: no run for path grpc/stream n=1000 concurrency=100", errors.getvalue())
            with open(os.path.join(folder, "results.json")) as handle:
                self.assertEqual(len(json.load(handle)["runs"]), 2)


if __name__ == "__main__":
    unittest.main()
