"""Reading ApacheBench's output, on real outputs of ab 2.3 against the real services (tests/fixtures)."""

import unittest

from lab.core.errors import AbOutputError
from lab.load import ab_output

from tests.support import fixture


class ReportParsingTests(unittest.TestCase):
    def test_reads_every_figure_of_a_clean_run_with_a_percentile_table(self):
        report = ab_output.parse_report(fixture("ab-rest-square-c100.txt"))

        self.assertEqual(report.concurrency, 100)
        self.assertEqual(report.completed, 1000)
        self.assertEqual(report.failed, 0)
        self.assertEqual(report.failed_breakdown, {"connect": 0, "receive": 0, "length": 0, "exceptions": 0})
        self.assertEqual(report.non2xx, 0)
        self.assertEqual(report.time_taken_s, 0.697)
        self.assertEqual(report.rps, 1433.77)
        self.assertEqual(report.mean_ms, 69.746)
        self.assertEqual(report.mean_across_ms, 0.697)
        self.assertEqual(report.document_length, 2)
        self.assertEqual(
            report.percentile_table_ms, {50: 58, 66: 75, 75: 82, 80: 90, 90: 112, 95: 126, 98: 148, 99: 187, 100: 220}
        )

    def test_counts_non_2xx_responses_which_ab_does_not_count_as_failed(self):
        report = ab_output.parse_report(fixture("ab-non2xx.txt"))

        self.assertEqual((report.completed, report.failed, report.non2xx), (200, 0, 200))
        self.assertEqual(report.rps, 676.51)
        self.assertEqual(report.percentile_table_ms[99], 48)

    def test_reads_length_failures_of_answers_whose_size_varies(self):
        report = ab_output.parse_report(fixture("ab-failed-length.txt"))

        self.assertEqual((report.completed, report.failed, report.non2xx), (200, 199, 0))
        self.assertEqual(report.failed_breakdown, {"connect": 0, "receive": 0, "length": 199, "exceptions": 0})

    def test_reads_receive_and_exception_failures_of_a_service_that_is_not_there(self):
        report = ab_output.parse_report(fixture("ab-failed-refused.txt"))

        self.assertEqual((report.completed, report.failed), (50, 75))
        self.assertEqual(report.failed_breakdown, {"connect": 0, "receive": 50, "length": 0, "exceptions": 25})
        self.assertEqual(report.rps, 45537.34)

    def test_reads_a_run_of_the_article_against_the_aggregator(self):
        # ab -n 1000 -c 100 on /grpc/stream/1000: each answer is 14437 bytes of squares.
        report = ab_output.parse_report(fixture("ab-aggregator-grpc-stream-c100.txt"))

        self.assertEqual((report.completed, report.failed, report.non2xx, report.document_length), (1000, 0, 0, 14437))
        self.assertEqual((report.rps, report.time_taken_s, report.mean_ms), (41.47, 24.113, 2411.267))
        self.assertEqual(report.percentile_table_ms[50], 2333)
        self.assertEqual(report.percentile_table_ms[100], 3839)

    def test_answers_past_the_aggregators_deadline_are_non_2xx_and_length_failures(self):
        # The aggregator's default 30 s deadline answered 504 problems, shorter than the 14437-byte squares.
        report = ab_output.parse_report(fixture("ab-aggregator-rest-unary-deadline.txt"))

        self.assertEqual((report.completed, report.failed, report.non2xx), (1000, 467, 467))
        self.assertEqual(report.failed_breakdown, {"connect": 0, "receive": 0, "length": 467, "exceptions": 0})
        self.assertEqual((report.rps, report.percentile_table_ms[90]), (4.98, 30921))

    def test_a_single_request_has_no_percentile_table(self):
        report = ab_output.parse_report(fixture("ab-single-request.txt"))

        self.assertEqual(report.completed, 1)
        self.assertEqual(report.mean_ms, 5.538)
        self.assertEqual(report.percentile_table_ms, {})

    def test_an_interrupted_output_is_an_error_not_zeros(self):
        whole = fixture("ab-rest-square-c100.txt")
        cut = whole[: whole.index("Requests per second")]

        with self.assertRaisesRegex(AbOutputError, "Requests per second"):
            ab_output.parse_report(cut)


class PercentileCsvTests(unittest.TestCase):
    def test_reads_all_101_percentiles_in_milliseconds(self):
        curve = ab_output.parse_percentile_csv(fixture("ab-rest-square-c100.csv"), completed=1000)

        self.assertEqual(len(curve), 101)
        self.assertEqual(
            (curve[0], curve[50], curve[90], curve[99], curve[100]), (10.468, 57.664, 112.315, 187.001, 219.952)
        )

    def test_reads_the_curve_of_a_run_against_the_aggregator(self):
        curve = ab_output.parse_percentile_csv(fixture("ab-aggregator-grpc-stream-c100.csv"), completed=1000)

        self.assertEqual((curve[50], curve[90], curve[99], curve[100]), (2333.342, 3243.919, 3696.393, 3838.803))
        self.assertEqual(curve, sorted(curve))

    def test_agrees_with_the_printed_table_to_the_millisecond(self):
        text = fixture("ab-non2xx.txt")
        table = ab_output.parse_report(text).percentile_table_ms
        curve = ab_output.parse_percentile_csv(fixture("ab-non2xx.csv"), completed=200)

        # Table rows use index completed*p/100, CSV rows int(0.5 + completed*p/100): a row apart at most.
        for percent in (50, 90, 99):
            self.assertLessEqual(abs(curve[percent] - table[percent]), 3, percent)
        self.assertEqual(round(curve[100]), table[100])

    def test_rows_ab_reads_past_its_last_request_are_the_slowest_request(self):
        # ab 2.3 with one request writes rows 50..99 from memory after its only sample (0.257 ms here).
        raw = fixture("ab-single-request.csv")
        self.assertIn("\n99,0.257\n", raw)

        curve = ab_output.parse_percentile_csv(raw, completed=1)

        self.assertEqual(curve[49], 5.517)
        self.assertEqual(set(curve), {5.517})

    def test_with_fifty_requests_only_row_99_is_past_the_end(self):
        raw = fixture("ab-rest-square-n50.csv")
        completed = ab_output.parse_report(fixture("ab-rest-square-n50.txt")).completed
        self.assertEqual(completed, 50)

        curve = ab_output.parse_percentile_csv(raw, completed)

        raw_rows = [float(line.split(",")[1]) for line in raw.splitlines()[1:]]
        self.assertEqual(curve[:99], raw_rows[:99])
        self.assertEqual(curve[99], raw_rows[100])
        self.assertEqual(curve, sorted(curve))

    def test_rejects_a_file_that_is_not_an_ab_csv(self):
        with self.assertRaises(AbOutputError):
            ab_output.parse_percentile_csv("percent,ms\n0,1.0\n", completed=1)
        with self.assertRaisesRegex(AbOutputError, "0..100"):
            ab_output.parse_percentile_csv("Percentage served,Time in ms\n0,1.0\n1,2.0\n", completed=1)


class CommandTests(unittest.TestCase):
    def test_keeps_the_articles_http_1_0_without_keep_alive_and_counts_socket_errors(self):
        command = ab_output.ab_command("http://127.0.0.1:8080/rest/unary/10", 1000, 100, 120, "/tmp/x.csv")

        self.assertEqual(
            command,
            [
                "ab",
                "-n",
                "1000",
                "-c",
                "100",
                "-s",
                "120",
                "-q",
                "-r",
                "-e",
                "/tmp/x.csv",
                "http://127.0.0.1:8080/rest/unary/10",
            ],
        )
        self.assertNotIn("-k", command)

    def test_a_warm_up_writes_no_csv(self):
        self.assertNotIn("-e", ab_output.ab_command("http://127.0.0.1:8080/", 10, 5, 60, None))


if __name__ == "__main__":
    unittest.main()
