"""A run's record, summary.md and the CI check, built from the real ab fixtures."""

import contextlib
import copy
import io
import json
import os
import tempfile
import unittest

from lab.core import catalogue, records
from lab.load import load_generator
from lab.measure import bench
from lab.results import check_results, floors, report, results

from tests.support import LAB_JAVA_OPTS, ab_fixture, cpu_usage, sample_conditions, sample_results, sample_with_floor


class RunRecordTests(unittest.TestCase):
    def record(self):
        report, curve = ab_fixture("ab-rest-square-c100")
        usage = cpu_usage(
            {"aggregator-service": 2.0, "square-rest-service": 1.0, "ab": 0.1, "machine": 3.5, "other": 0.4}, wall_s=1.0
        )
        return bench.figures(
            catalogue.ALL["rest/unary"],
            1000,
            report,
            curve,
            usage,
            {"aggregator-service": 200.0, "square-rest-service": 150.0},
        )

    def test_every_response_had_the_expected_answers_length_or_the_run_says_not(self):
        report, curve = ab_fixture("ab-aggregator-grpc-stream-c100")
        record = bench.figures(catalogue.ALL["grpc/stream"], 1000, report, curve, {}, {})

        # ab checks every response's length against the first one's; the first one's is the expected answer's.
        self.assertEqual(
            record["verified"],
            {
                "pre_check": "exact body",
                "expected_bytes": 14437,
                "response_bytes": 14437,
                "length_checked": 1000,
                "length_mismatches": 0,
                "passed": 1000,
            },
        )
        self.assertEqual(records.problems(dict(record, failed=0, non2xx=0)), [])

        wrong = bench.figures(catalogue.ALL["grpc/stream"], 100, report, curve, {}, {})
        self.assertEqual(wrong["verified"]["passed"], 0)
        self.assertEqual(
            records.problems(dict(wrong, failed=0, non2xx=0)),
            ["responses of 14437 bytes where the expected answer has 1151"],
        )

    def test_percentiles_come_from_the_csv_curve_and_the_mean_from_ab(self):
        self.assertEqual(
            self.record()["latency_ms"], {"mean": 69.746, "p50": 57.664, "p90": 112.315, "p99": 187.001, "max": 219.952}
        )

    def test_cpu_per_request_and_per_downstream_call(self):
        cpu = self.record()["cpu"]["aggregator-service"]

        # 2 s over 1000 requests of n = 1000 squares: 2 ms a request, 2 us a square call.
        self.assertEqual(cpu, {"seconds": 2.0, "percent": 200.0, "ms_per_request": 2.0, "us_per_call": 2.0})

    def test_keeps_abs_printed_table_and_counts(self):
        record = self.record()

        self.assertEqual(record["latency_table_ms"]["99"], 187)
        self.assertEqual(
            (record["completed"], record["failed"], record["non2xx"], record["rps"]), (1000, 0, 0, 1433.77)
        )
        self.assertEqual(record["downstream_calls"], 1000 * 1000)

    def test_without_a_csv_the_printed_table_gives_the_percentiles(self):
        report, _ = ab_fixture("ab-rest-square-c100")

        self.assertEqual(
            load_generator.latency(report, None), {"mean": 69.746, "p50": 58, "p90": 112, "p99": 187, "max": 220}
        )


def section(text, heading):
    """The lines of one Markdown table of summary.md: the first table after the given heading line."""
    lines = text.split(heading, 1)[1].splitlines() if heading else text.splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("| "))
    rows = []
    for line in lines[first:]:
        if not line.startswith("| "):
            break
        rows.append(line)
    return rows


class SummaryTests(unittest.TestCase):
    """summary.md renders the report's own tables (lab.view) as Markdown: one definition of each table."""

    def test_one_row_per_run_then_cpu_and_memory_per_service(self):
        text = report.summary_markdown(sample_results())

        runs = section(text, "")
        self.assertEqual(
            runs[0], "| path | n | concurrency | req/s | mean | p50 | p90 | p99 | max | completed | failed | non-2xx |"
        )
        self.assertEqual(len(runs), 2 + 3)
        self.assertEqual(
            runs[2],
            "| rest/unary | 1000 | 100 | 1,433.77 | 69.7 ms | 57.7 ms | 112.3 ms | 187.0 ms | "
            "220.0 ms | 1000 | 0 | 0 |",
        )
        resources = section(text, "## CPU and memory")
        self.assertEqual(
            resources[0],
            "| path | n | concurrency | aggregator-service | square-rest-service | "
            "square-grpc-service | ab | steal | machine | service CPU / request | "
            "service CPU / call | bytes / call: request · response | peak RSS (MiB) |",
        )
        # The fixture's shares of the cores over its 0.7 s run; per call: 0.98 ms over n = 1000 calls.
        self.assertEqual(
            resources[2],
            "| rest/unary | 1000 | 100 | 90 %, 0.63 s | 50 %, 0.35 s | – | 10 %, 0.07 s | "
            "5 %, 0.04 s | 175 %, 1.22 s | 0.98 ms | 1.0 µs | 108 B · 110 B | "
            "181 / 150 / – |",
        )

    def test_the_markdown_names_the_machine_and_flags_failures(self):
        data = sample_results()
        data["runs"][1]["non2xx"] = 200

        text = report.summary_markdown(data)

        self.assertIn("AMD EPYC (fixture), 2 cores, 23.5 GiB", text)
        self.assertIn("CPU % is of one core (2 cores = 200 %)", text)
        self.assertIn("- grpc/unary n=1000 c=100: 200 non-2xx responses", text)


class ServerSideSummaryTests(unittest.TestCase):
    def test_a_table_with_the_services_own_counts_and_times(self):
        data = sample_results()
        data["runs"][1]["server_side"] = {"error": "no server-side figures: cannot read x"}

        table = section(report.summary_markdown(data), "## Server side")

        self.assertEqual(
            table[0],
            "| path | n | concurrency | aggregator requests | aggregator ms / request | "
            "downstream calls | client µs / call | square calls | square µs / call |",
        )
        self.assertEqual(
            table[2], "| rest/unary | 1000 | 100 | 1,000 | 250.00 | 1,000,000 | 1,900.0 | 1,000,000 | 40.0 |"
        )
        self.assertEqual(table[3], "| grpc/unary | 1000 | 100 | no server-side figures: cannot read x |  |  |  |  |  |")
        # The stream's times are its time per message, upper bounds, and marked so: the client's is its 250 ms a
        # request over its 1,000 messages.
        self.assertEqual(
            table[4], "| grpc/stream | 1000 | 100 | 200 | 250.00 | 200,000 | ≤ 250.0 | 200,000 | ≤ 300.0 |"
        )

    def test_older_results_without_server_side_figures_have_no_such_table(self):
        data = sample_results()
        for run in data["runs"]:
            del run["server_side"]

        self.assertNotIn("## Server side", report.summary_markdown(data))


class FloorSummaryTests(unittest.TestCase):
    def test_a_row_per_path_against_its_floor_the_missed_goal_in_bold(self):
        data = sample_with_floor()
        data["runs"][0]["rps"] = 0.5 * 136571.22 / 50
        floors.attach(data, data["floor"]["runs"])

        table = section(report.summary_markdown(data), "## Transport floor")

        self.assertEqual(
            table[0],
            "| path | n | concurrency | downstream calls/s | floor: transport, window | "
            "floor calls/s | fraction of floor | goal 60 % | path CPU µs/call | "
            "floor CPU µs/call | load 1m: path / floor |",
        )
        self.assertEqual(
            table[2],
            "| rest/unary | 50 | 5 | 68,286 | rest_unary, 40 connections | 136,571 | **50.0 %** | "
            "**not met** | 19.5 | 8.1 | 1.50 / 4.64 |",
        )
        self.assertEqual(
            table[3],
            "| grpc/unary | 50 | 5 | 33,826 | grpc_unary, 40 calls in flight | 35,622 | "
            "95.0 % | met | 38.5 | 28.2 | 1.50 / 4.57 |",
        )
        self.assertTrue(
            table[4].startswith("| grpc/stream | 50 | 5 | 8,241 | grpc_stream, 5 streams × 50 messages | 70,597 |")
        )
        self.assertEqual(len(table), 5)

    def test_the_section_says_how_the_floor_ran_and_shows_a_failed_floor_run(self):
        data = with_failed_stream_floor("the grpc_stream client failed (exit status 1)")

        text = report.summary_markdown(data)

        self.assertIn(
            "(aggregator.in-flight 8, aggregator.rest.max-connections 64); each window warmed up for 1s (longer "
            "while a JVM's JIT still compiled), then measured 2s.",
            text,
        )
        self.assertIn(
            "| grpc/stream | 50 | 5 | 8,241 | grpc_stream, 5 streams × 50 messages | "
            "**no floor: its floor run failed (below)** |  |  |  |  |  |\n",
            text,
        )
        self.assertIn(
            "| grpc_stream | 5 streams × 50 messages | error: the grpc_stream client failed (exit status 1) "
            "|  |  |  |  |  |  |  |  | floor/ |",
            section(text, "The floor runs:"),
        )

    def test_a_failed_floor_runs_output_cannot_break_the_markdown(self):
        data = with_failed_stream_floor("usage: client <grpc_unary|grpc_stream|rest_unary>")

        self.assertIn(r"error: usage: client <grpc_unary\|grpc_stream\|rest_unary>", report.summary_markdown(data))

    def test_results_without_a_floor_have_no_floor_section(self):
        self.assertNotIn("Transport floor", report.summary_markdown(sample_results()))

    def test_a_floor_with_nothing_to_compare_says_so(self):
        data = sample_results()
        data["settings"]["paths"] = ["rest/square"]
        data["runs"] = [dict(data["runs"][0], path="rest/square")]
        floors.attach(data, [])

        self.assertIn("No measured path has a floor", report.summary_markdown(data))


class FloorCheckTests(unittest.TestCase):
    def test_a_consistent_floor_passes(self):
        data = sample_with_floor()

        self.assertEqual(check_results.problems(data), [])
        self.assertEqual(check_results.notes(data), [])

    def test_a_path_above_its_floor_is_a_floor_that_failed_named_with_both_figures_never_a_fraction(self):
        data = sample_with_floor()
        data["runs"][1]["rps"] = 1.1 * data["runs"][1]["floor"]["floor_calls_per_second"] / data["runs"][1]["n"]
        floors.attach(data, data["floor"]["runs"])

        record = data["runs"][1]["floor"]
        self.assertNotIn("fraction", record)
        self.assertEqual((True, None), (record["above_floor"], record["met"]))
        said = (
            "a floor that failed: grpc/unary made 39,185 downstream calls/s, more than its floor's 35,622 (40 calls "
            "in flight): the floor ran colder or on a busier machine than the path, so the path has no fraction of "
            "floor"
        )
        self.assertEqual(said, record["error"])
        # A finding the check notes (the Maven build's floors are short), not a broken chain.
        self.assertEqual(check_results.problems(data), [])
        self.assertEqual(check_results.notes(data), ["grpc/unary n=50 c=5: " + said])
        self.assertEqual([], results.violations(data))
        page = report.render(data, "", "")
        self.assertNotIn("110.0 %", page)
        self.assertIn("a floor that failed: the path made more calls/s", page)
        self.assertIn(said, report.summary_markdown(data))

    def test_a_path_above_its_floors_median_within_the_noise_of_both_is_at_its_floor_at_100_percent(self):
        data = sample_with_floor()
        run = data["runs"][1]
        floor_run = next(record for record in data["floor"]["runs"] if record["transport"] == "grpc_unary")
        floor_run["repeats"] = [{"calls_per_second": cps} for cps in (34_000.0, 35_622.42, 36_500.0)]
        run["repeats"] = [{"rps": rps} for rps in (700.0, 720.0, 740.0)]
        run["rps"] = 720.0
        floors.attach(data, data["floor"]["runs"])

        record = run["floor"]
        self.assertEqual((True, 1.0, True), (record["at_floor"], record["fraction"], record["met"]))
        self.assertNotIn("above_floor", record)
        said = (
            "at its floor: grpc/unary made 36,000 downstream calls/s against its floor's 35,622 (40 calls in flight), "
            "1.1 % more, but its slowest repeat (35,000) made no more than the floor's fastest (36,500): within the "
            "noise of both, so 100 %"
        )
        self.assertEqual(said, record["at_floor_why"])
        # The sample's repeats are bare figures, which the check names; of the floor's chain it finds nothing.
        self.assertEqual(
            [], [found for found in check_results.problems(data) if "fraction" in found or "floor:" in found]
        )
        self.assertEqual([], results.violations(data))
        page = report.render(data, "", "")
        self.assertIn("100.0 % (at its floor, within the noise)", page)
        self.assertIn(said, page)
        self.assertIn("- grpc/unary: " + said, report.summary_markdown(data))

    def test_a_path_above_its_floor_beyond_the_noise_of_both_is_still_a_floor_that_failed(self):
        data = sample_with_floor()
        run = data["runs"][1]
        floor_run = next(record for record in data["floor"]["runs"] if record["transport"] == "grpc_unary")
        floor_run["repeats"] = [{"calls_per_second": cps} for cps in (34_000.0, 35_622.42, 36_500.0)]
        run["repeats"] = [{"rps": rps} for rps in (740.0, 760.0, 780.0)]
        run["rps"] = 760.0
        floors.attach(data, data["floor"]["runs"])

        self.assertEqual((True, None), (run["floor"]["above_floor"], run["floor"]["met"]))
        self.assertNotIn("at_floor", run["floor"])

    def test_a_path_below_the_goal_is_a_finding_not_a_failure(self):
        data = sample_with_floor()
        data["runs"][0]["rps"] = 0.1 * 6828.561 / 50
        floors.attach(data, data["floor"]["runs"])

        self.assertFalse(data["runs"][0]["floor"]["met"])
        self.assertEqual(check_results.problems(data), [])

    def test_figures_that_do_not_add_up_fail(self):
        data = sample_with_floor()
        data["runs"][0]["floor"]["fraction"] = 0.59
        data["runs"][1]["floor"]["floor_calls_per_second"] = 50000.0
        data["runs"][2]["floor"]["path_calls_per_second"] = 9000.0
        data["runs"][2]["floor"]["fraction"] = round(9000.0 / 70597.16, 4)

        found = check_results.problems(data)

        self.assertEqual(
            found,
            [
                "rest/unary n=50 c=5: fraction 0.59, but 71688.5 / 136571.22 = 0.524917",
                "grpc/unary n=50 c=5: floor calls/s 50000.0, but its floor run made 35622.42",
                "grpc/unary n=50 c=5: fraction 0.9496, but 33825.5 / 50000.0 = 0.676510",
                "grpc/stream n=50 c=5: downstream calls/s 9000.0, but req/s x n = 8240.5",
            ],
        )

    def test_met_must_follow_from_the_fraction(self):
        data = sample_with_floor()
        data["runs"][1]["floor"]["met"] = False

        self.assertEqual(
            check_results.problems(data),
            ["grpc/unary n=50 c=5: goal 0.6 met False does not follow from the fraction 0.9496 and the goal 0.6"],
        )

    def test_a_floor_with_another_window_than_the_aggregators_fails(self):
        data = sample_with_floor()
        data["floor"]["runs"][1]["settings"]["in_flight"] = 160

        self.assertEqual(
            check_results.problems(data),
            ["floor grpc_unary, 40 calls in flight: the floor ran with in_flight=160, the aggregator's window is 40"],
        )

    def test_results_whose_aggregator_had_other_settings_than_the_floors_fail(self):
        data = sample_with_floor()
        data["settings"]["aggregator"] = {"in_flight": 32, "rest_max_connections": 64, "rest_replicas": 1}

        found = check_results.problems(data)

        self.assertIn(
            "floor: made for the aggregator settings {'in_flight': 8, 'rest_max_connections': 64, "
            "'rest_replicas': 1}, but the aggregator ran with {'in_flight': 32, 'rest_max_connections': 64, "
            "'rest_replicas': 1}",
            found,
        )
        self.assertIn("no floor run for grpc_unary, 160 calls in flight", found)
        self.assertIn("no floor run for rest_unary, 64 connections", found)
        self.assertIn(
            "grpc/unary n=50 c=5: compared with the floor of grpc_unary {'in_flight': 40}, but the "
            "aggregator's window was grpc_unary {'in_flight': 160}",
            found,
        )

    def test_a_floor_run_with_another_number_of_repeats_than_repeats_fails(self):
        data = sample_with_floor()
        data["floor"]["runs"][2]["repeats"] = [{}, {}, {}]

        self.assertEqual(
            check_results.problems(data), ["floor grpc_stream, 5 streams × 50 messages: 3 repeats, REPEATS=1"]
        )

    def test_a_missing_or_failed_floor_fails(self):
        data = sample_with_floor()
        del data["floor"]
        self.assertEqual(
            check_results.problems(data),
            ["FLOOR=1, but results.json has no floor section: the floor did not run or did not finish"],
        )
        data["settings"]["floor"] = False
        self.assertEqual(check_results.problems(data), [])

        data = sample_with_floor()
        records = data["floor"]["runs"]
        records[0] = {
            "transport": "rest_unary",
            "window": {"connections": 40},
            "folder": "floor/rest_unary_c40",
            "error": "the floor's server was not listening after 60 s",
        }
        floors.attach(data, records)
        self.assertEqual(
            check_results.problems(data),
            ["floor rest_unary, 40 connections: the floor's server was not listening after 60 s"],
        )

    def test_the_floor_must_run_with_the_services_jvm_options(self):
        data = sample_with_floor()
        data["settings"]["java_opts"] = "-Xmx1g"

        found = check_results.problems(data)

        self.assertEqual(len(found), 3)
        self.assertEqual(
            found[0],
            "floor rest_unary, 40 connections: ran with JAVA_OPTS %r, the services with '-Xmx1g'" % LAB_JAVA_OPTS,
        )


class CheckResultsTests(unittest.TestCase):
    def test_a_clean_complete_run_passes(self):
        self.assertEqual(check_results.problems(sample_results()), [])

    def test_responses_without_the_expected_answers_length_fail(self):
        data = sample_results()
        data["runs"][0]["verified"].update(response_bytes=2, passed=0)

        self.assertIn(
            "rest/unary n=1000 c=100: 0 of 1000 responses had the expected answer's length",
            check_results.problems(data),
        )

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
        self.assertIn(
            "grpc/stream n=1000 c=100: no CPU seconds recorded for square-grpc-service, which served this path", found
        )
        self.assertIn("no run for path rest/square n=1000 concurrency=100", found)
        self.assertIn("the lab did not finish (finished_at is empty)", found)
        # A window of a few 10 ms clock ticks (50 requests of the stream: about 35 ms) may hold no tick of a service.
        data["runs"][2]["time_taken_s"] = 0.035
        self.assertFalse(any("no CPU seconds recorded" in p for p in check_results.problems(data)))

    def test_an_unverified_run_or_an_ab_error_fails(self):
        data = sample_results()
        data["runs"][0]["verified"] = False
        data["runs"][1] = {key: data["runs"][1][key] for key in ("path", "n", "concurrency", "requests")}
        data["runs"][1]["error"] = "ab exited with code 1: apr_pollset_poll: The timeout specified has expired"

        found = check_results.problems(data)

        self.assertIn("rest/unary n=1000 c=100: the answer was not verified", found)
        self.assertIn(
            "grpc/unary n=1000 c=100: ab exited with code 1: apr_pollset_poll: The timeout specified has expired", found
        )

    def test_the_command_reads_a_results_folder(self):
        with tempfile.TemporaryDirectory() as folder, contextlib.redirect_stdout(
            io.StringIO()
        ), contextlib.redirect_stderr(io.StringIO()) as errors:
            results.write_json(folder, sample_results())
            self.assertEqual(check_results.main([folder]), 0)
            broken = copy.deepcopy(sample_results())
            broken["runs"].pop()
            results.write_json(folder, broken)
            self.assertEqual(check_results.main([folder]), 1)
            self.assertIn("FAIL: no run for path grpc/stream n=1000 concurrency=100", errors.getvalue())
            with open(os.path.join(folder, "results.json")) as handle:
                self.assertEqual(len(json.load(handle)["runs"]), 2)


class ConditionsCheckTests(unittest.TestCase):
    """Payload shapes, networks and bytes per call, as CI checks them."""

    def test_every_shape_on_every_network_passes_and_a_missing_one_is_named(self):
        data = sample_conditions()
        self.assertEqual(check_results.problems(data), [])

        data["runs"] = [run for run in data["runs"] if (run["network"], run["payload"]) != ("lan", "collection")]
        self.assertEqual(
            check_results.problems(data),
            [
                "no run for path grpc/stream n=20 concurrency=1 payload=collection network=lan",
                "no run for path rest/unary n=20 concurrency=1 payload=collection network=lan",
            ],
        )

    def test_a_run_must_say_its_payload_and_network(self):
        data = sample_results()
        del data["runs"][0]["payload"]
        data["runs"][1]["network"] = "moon"

        found = check_results.problems(data)

        self.assertIn("rest/unary n=1000 c=100: payload None is not one of small, wide, deep, collection", found)
        self.assertIn(
            "grpc/unary n=1000 c=100 network=moon: network 'moon' is not one of loopback, proxy, hosts, lan, wan", found
        )

    def test_every_run_has_bytes_per_call_above_zero(self):
        data = sample_results()
        del data["runs"][0]["bytes_per_call"]
        data["runs"][1]["bytes_per_call"]["response"] = 0.0
        data["runs"][2]["bytes_per_call"] = {"error": "no bytes per call: ss exited with code 1: x"}

        self.assertEqual(
            check_results.problems(data),
            [
                "rest/unary n=1000 c=100: no bytes per call (bytes_per_call is missing)",
                "grpc/unary n=1000 c=100: response bytes per call is 0.0",
                "grpc/stream n=1000 c=100: no bytes per call: ss exited with code 1: x",
            ],
        )

    def test_the_articles_rest_call_has_a_gets_request_bytes(self):
        data = sample_conditions()
        data["runs"][0]["bytes_per_call"]["request"] = 11.2

        self.assertEqual(
            check_results.problems(data),
            ["rest/unary n=20 c=1: 11.2 request bytes per call, but a GET with its headers has 60 to 400"],
        )

    def test_a_shape_carries_more_bytes_than_the_small_call(self):
        data = sample_conditions()
        # rest/unary collection on loopback, as an aggregator that ignored ?payload= would have it.
        data["runs"][1]["bytes_per_call"].update(request=108.0, response=110.0)

        self.assertEqual(
            check_results.problems(data),
            [
                "rest/unary n=20 c=1 payload=collection: 108.0 request and 110.0 response bytes per call, no more than "
                "the small call's 108.0 and 110.0: the shape was not carried"
            ],
        )

    def test_a_run_through_the_proxy_has_the_proxys_cpu(self):
        data = sample_conditions()
        del data["runs"][4]["cpu"]["toxiproxy"]

        self.assertEqual(
            check_results.problems(data),
            ["rest/unary n=20 c=1 network=lan: no CPU seconds recorded for Toxiproxy, which carried its calls"],
        )

    def test_on_a_network_a_p50_below_its_round_trips_fails(self):
        data = sample_conditions()
        # n = 20 in windows of 8: 3 round trips of 0.5 ms for a unary request, 1 for the stream's.
        data["runs"][4]["latency_ms"].update(p50=1.4)
        data["runs"][6]["latency_ms"].update(p50=0.5)

        self.assertEqual(
            check_results.problems(data),
            [
                "rest/unary n=20 c=1 network=lan: p50 1.4 ms, below the 1.5 ms that its round trips of 0.5 ms take at "
                "least on network lan: the network's latency did not apply"
            ],
        )
        self.assertEqual([path.round_trips(20, 8) for path in catalogue.ALL.values()], [3, 3, 3, 20, 1, 0])

    def test_round_trips_want_the_stream_below_rest_unary_on_a_network_with_one(self):
        data = sample_conditions()
        self.assertEqual(check_results.round_trip_problems(data), [])

        data["runs"][6]["latency_ms"]["p50"] = 70.0
        del data["runs"][7]
        self.assertEqual(
            check_results.round_trip_problems(data),
            [
                "rest/unary n=20 c=1 network=lan: grpc/stream's p50 70.0 ms is not below rest/unary's 63.43 ms, though "
                "its messages share one round trip",
                "rest/unary n=20 c=1 payload=collection network=lan: no grpc/stream run beside it to compare",
            ],
        )
        self.assertEqual(
            check_results.round_trip_problems(sample_results()),
            ["--round-trips: no rest/unary run on a network with a round trip"],
        )

    def test_the_command_takes_round_trips_as_an_option(self):
        with tempfile.TemporaryDirectory() as folder, contextlib.redirect_stdout(
            io.StringIO()
        ) as out, contextlib.redirect_stderr(io.StringIO()):
            results.write_json(folder, sample_conditions())
            self.assertEqual(check_results.main([folder, "--round-trips"]), 0)
            self.assertEqual(check_results.main([folder, "--nope"]), 2)
        self.assertIn("on each network with a round trip, grpc/stream's p50 below rest/unary's", out.getvalue())

    def test_a_connection_closed_during_a_run_is_a_note(self):
        data = sample_results()
        data["runs"][0]["bytes_per_call"]["connections_closed"] = 2

        self.assertIn(
            "rest/unary n=1000 c=100: 2 of the square service's connections closed during the run: idle "
            "ones carried nothing, but any bytes a busy one carried in the run are not in its bytes per "
            "call",
            check_results.notes(data),
        )

    def test_a_fraction_of_floor_is_for_the_small_payload_on_loopback_only(self):
        data = sample_with_floor()
        data["runs"][0]["payload"] = "wide"
        data["settings"]["payload"] = ["small", "wide"]

        self.assertIn(
            "rest/unary n=50 c=5 payload=wide: a fraction of floor, but the floor is for the small payload "
            "on loopback only",
            check_results.problems(data),
        )


def with_failed_stream_floor(error):
    """The sample with a floor whose grpc_stream run failed with this error."""
    data = sample_with_floor()
    records = data["floor"]["runs"]
    records[2] = {
        "transport": "grpc_stream",
        "window": records[2]["window"],
        "folder": records[2]["folder"],
        "error": error,
    }
    floors.attach(data, records)
    return data


if __name__ == "__main__":
    unittest.main()


class ReplicasTests(unittest.TestCase):
    def test_the_summary_says_how_replicas_are_counted_only_when_there_are_several(self):
        data = sample_results()
        self.assertNotIn("replicas", report.summary_markdown(data))

        data["settings"]["replicas"] = 2
        self.assertIn(
            "2 replicas of each square service: a square service's CPU is its replicas' added up, its "
            "peak RSS the largest replica's.",
            report.summary_markdown(data),
        )
