"""The verdict: the sentences summary.md and report.html open with, computed from a results.json."""

import unittest

from lab.results import report, verdict

from tests.support import sample_results


def run(path, rps_repeats, cpu_repeats, network="loopback", n=1000, concurrency=100):
    """A measured run of results.json with its repeats: req/s and CPU per call are the repeats' medians, the CPU split
    between the aggregator and the square service that served the path."""
    rps, cpu = sorted(rps_repeats)[1], sorted(cpu_repeats)[1]
    square = "square-grpc-service" if path.startswith("grpc") else "square-rest-service"
    return {
        "path": path,
        "payload": "small",
        "network": network,
        "n": n,
        "concurrency": concurrency,
        "verified": True,
        "failed": 0,
        "non2xx": 0,
        "rps": rps,
        "services": ["aggregator-service", square],
        "cpu": {"aggregator-service": {"us_per_call": cpu * 0.6}, square: {"us_per_call": cpu * 0.4}},
        "repeats": [{"rps": r, "cpu_us_per_call": c} for r, c in zip(rps_repeats, cpu_repeats)],
    }


def lab_run(*runs, networks=("loopback",)):
    paths = list(dict.fromkeys(one["path"] for one in runs))
    return {
        "settings": {"paths": paths, "n": [1000], "concurrency": [100], "network": list(networks)},
        "runs": list(runs),
    }


class PairTests(unittest.TestCase):
    def test_overlapping_ranges_are_no_difference_within_the_spread(self):
        data = lab_run(
            run("rest/unary", [35.0, 38.0, 40.0], [50.0, 52.0, 54.0]),
            run("rest/h2c", [37.0, 39.0, 42.0], [49.0, 51.0, 53.0]),
        )

        self.assertEqual(
            verdict.sentences(data),
            ["rest/h2c and rest/unary: no difference within the spread, in requests a second or in CPU per call."],
        )

    def test_a_clear_winner_is_named_with_its_ratio_and_its_share_of_the_cpu_per_call(self):
        data = lab_run(
            run("rest/unary", [34.0, 35.0, 39.4], [48.0, 50.0, 56.0]),
            run("grpc/unary", [85.0, 87.5, 88.0], [19.5, 20.0, 20.5]),
        )

        self.assertEqual(
            verdict.sentences(data),
            ["grpc/unary serves 2.5 times rest/unary's requests a second for 40 % of its CPU per call."],
        )

    def test_the_same_requests_a_second_for_less_cpu_and_faster_for_more(self):
        data = lab_run(
            run("grpc/unary", [85.0, 87.5, 88.0], [19.5, 20.0, 20.5]),
            run("grpc/pingpong", [86.0, 88.0, 90.0], [14.0, 15.0, 16.0]),
            run("grpc/stream", [120.0, 132.0, 133.0], [16.5, 18.0, 19.0]),
        )

        self.assertEqual(
            verdict.sentences(data),
            [
                "grpc/pingpong and grpc/unary: no difference in requests a second within the spread; grpc/pingpong "
                "takes 75 % of grpc/unary's CPU per call.",
                "grpc/stream serves 1.50 times grpc/pingpong's requests a second, for 1.20 times its CPU per call.",
            ],
        )

    def test_without_repeats_medians_within_five_percent_are_not_called_a_difference(self):
        data = lab_run(
            run("rest/unary", [35.0, 35.0, 35.0], [50.0, 50.0, 50.0]),
            run("rest/h2c", [36.0, 36.0, 36.0], [40.0, 40.0, 40.0]),
        )
        for one in data["runs"]:
            one["repeats"] = one["repeats"][:1]

        self.assertEqual(
            verdict.sentences(data),
            [
                "rest/h2c and rest/unary: no difference in requests a second within 5 % (a single repeat: no spread to "
                "judge by); rest/h2c takes 80 % of rest/unary's CPU per call."
            ],
        )

    def test_a_run_that_cannot_be_trusted_is_not_compared(self):
        data = lab_run(
            run("rest/unary", [34.0, 35.0, 39.4], [48.0, 50.0, 56.0]),
            run("grpc/unary", [85.0, 87.5, 88.0], [19.5, 20.0, 20.5]),
        )
        data["runs"][0]["failed"] = 3

        self.assertEqual(
            verdict.sentences(data),
            ["grpc/unary and rest/unary: not compared, as rest/unary's figures cannot be trusted (see below)."],
        )


class ConditionTests(unittest.TestCase):
    def test_the_network_that_hurts_a_path_most_is_named_first(self):
        data = lab_run(
            run("rest/unary", [34.0, 35.0, 36.0], [48.0, 50.0, 52.0]),
            run("grpc/stream", [360.0, 370.0, 380.0], [3.9, 4.0, 4.1]),
            run("rest/unary", [6.5, 7.0, 7.5], [60.0, 62.0, 64.0], network="wan"),
            run("grpc/stream", [200.0, 222.0, 230.0], [4.0, 4.2, 4.4], network="wan"),
            networks=("loopback", "wan"),
        )

        self.assertEqual(
            verdict.sentences(data)[-1],
            "On wan against loopback, rest/unary suffers most, keeping "
            "20 % of its requests a second; grpc/stream 60 %.",
        )


class SummaryTests(unittest.TestCase):
    def test_summary_md_begins_with_the_verdict(self):
        text = report.summary_markdown(sample_results())

        self.assertEqual(
            text[: text.index("\n\n", 40) + 2],
            (
                "# REST vs gRPC load-test results\n\n"
                "- rest/unary serves 2.1 times grpc/unary's requests a second for 51 % of its CPU per call.\n\n"
            ),
        )


if __name__ == "__main__":
    unittest.main()
