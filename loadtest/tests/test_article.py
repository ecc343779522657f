"""The side-by-side table of the article's code and ours (lab.article): medians over rounds, ours against theirs.
The run itself needs the article's code, which the project does not hold (docs/performance.md has the recipe)."""

import unittest

from lab.core.errors import LabError
from lab.experiments import article
from lab.results import results


def measured(system, number, path, rps, p99_ms, cpu_us):
    return article.Measured(system, number, path, rps, p99_ms, cpu_us, 1000, 1000, 0, 0)


class SideBySideTests(unittest.TestCase):
    def test_each_path_is_the_median_of_its_rounds_and_ours_is_against_the_articles(self):
        rows = []
        for path, theirs, ours in (
            ("rest/unary", 20.0, 40.0),
            ("grpc/unary", 50.0, 100.0),
            ("grpc/stream", 100.0, 350.0),
        ):
            rows += [
                measured("article", 1, path, theirs - 1, 9000, 100.0),
                measured("article", 2, path, theirs + 1, 9400, 102.0),
                measured("ours", 1, path, ours, 4000, 50.0),
                measured("ours", 2, path, ours, 4200, 48.0),
            ]
        peaks = {"article": {article.GRPC: [325.4, 383.0]}, "ours": {article.GRPC: [300.0, 310.6]}}

        table = (
            results.markdown(article.tables(rows, peaks)[0]) + results.markdown(article.tables(rows, peaks)[1])
        ).splitlines()

        self.assertIn("| rest/unary | 20.0 | 40.0 | 2.00x | 9.20 s | 4.10 s | 101.0 us | 49.0 us |", table)
        self.assertIn("| grpc/stream | 100.0 | 350.0 | 3.50x | 9.20 s | 4.10 s | 101.0 us | 49.0 us |", table)
        self.assertIn("| grpc square | 325, 383 | 300, 311 |", table)

    def test_only_2xx_answers_count_and_a_body_of_another_length_is_no_failure(self):
        breakdown = {"connect": 0, "receive": 2, "length": 40, "exceptions": 1}
        report = article.ab_output.AbReport(100, 1000, 43, breakdown, 37, 10.0, 100.0, 1000.0, 10.0, 14437)

        self.assertEqual(article.ab_output.answered_2xx(report), 1000 - 37 - 3)

    def test_our_aggregator_waits_as_long_as_ab_so_that_it_sheds_nothing_the_article_would_answer(self):
        self.assertEqual(
            article.ours({m: "/repo/%s.jar" % m for m in article.OUR_MODULES.values()}).arguments,
            {article.AGGREGATOR: ["--aggregator.deadline=%ds" % article.AB_TIMEOUT_S]},
        )
        self.assertEqual(article.article("/a").arguments, {})

    def test_jars_that_were_not_built_are_named_with_the_command_that_builds_them(self):
        def ours_not_needed():
            raise AssertionError("ours is built only once the article's jars are there")

        with self.assertRaisesRegex(LabError, "article.s jar /nowhere/rest-square-service/.* \\(mvn -q package"):
            article._run(article.article("/nowhere"), ours_not_needed, article.Options(), "/tmp/unused")

    def test_ours_is_each_services_jar_of_its_module(self):
        jars = {m: "/repo/%s/target/%s-2.0.jar" % (m, m) for m in article.OUR_MODULES.values()}

        self.assertEqual(
            article.ours(jars).jars,
            {
                article.REST: jars["square-rest-service"],
                article.GRPC: jars["square-grpc-service"],
                article.AGGREGATOR: jars["aggregator-service"],
            },
        )


if __name__ == "__main__":
    unittest.main()
