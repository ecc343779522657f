"""What each path must answer, which services it needs, and how the knobs are read."""

import unittest

from lab import ab_output, paths
from lab.settings import Settings, SettingsError


class PathTests(unittest.TestCase):

    def test_the_aggregators_answer_is_the_contracts_exact_json(self):
        rest = paths.ALL["rest/unary"]

        self.assertEqual(rest.expected_body(3), '[{"1":1},{"2":4},{"3":9}]')
        self.assertEqual(rest.expected_body(0), "[]")
        self.assertEqual(paths.ALL["grpc/stream"].expected_body(1), '[{"1":1}]')

    def test_the_rest_square_baseline_answers_a_bare_number(self):
        self.assertEqual(paths.ALL["rest/square"].expected_body(65536), "4294967296")
        self.assertEqual(paths.ALL["rest/square"].calls_per_request(65536), 1)

    def test_urls_come_from_the_services_base_urls(self):
        urls = {"aggregator-service": "http://127.0.0.1:8080"}

        self.assertEqual(paths.ALL["grpc/unary"].url(urls, 10), "http://127.0.0.1:8080/grpc/unary/10")

    def test_each_path_needs_the_aggregator_and_its_square_service_only(self):
        self.assertEqual(paths.services_needed(paths.parse("grpc/stream")),
                         ["square-grpc-service", "aggregator-service"])
        self.assertEqual(paths.services_needed(paths.parse(paths.DEFAULT)),
                         ["square-rest-service", "square-grpc-service", "aggregator-service"])
        self.assertEqual(paths.services_needed(paths.parse("rest/square")), ["square-rest-service"])

    def test_an_unknown_path_names_the_known_ones(self):
        with self.assertRaises(ValueError) as caught:
            paths.parse("rest/unary soap/unary")
        self.assertEqual(str(caught.exception), "unknown path 'soap/unary' in PATHS; known paths: rest/unary rest/h2c "
                                                "grpc/unary grpc/pingpong grpc/stream rest/square")


class SettingsTests(unittest.TestCase):

    def test_defaults_replicate_the_article(self):
        settings = Settings.from_env({})

        self.assertEqual((settings.requests, settings.concurrency, settings.n), (1000, [100], [1000]))
        # Grouped: REST over HTTP/1.1 and HTTP/2, then gRPC unary, ping-pong and pipelined stream.
        self.assertEqual(settings.paths, ["rest/unary", "rest/h2c", "grpc/unary", "grpc/pingpong", "grpc/stream"])

    def test_lists_of_concurrency_and_n_sweep_every_combination(self):
        settings = Settings.from_env({"CONCURRENCY": "1 8", "N": "10 100", "REQUESTS": "40", "PATHS": "grpc/unary"})

        self.assertEqual(settings.combinations(), [("grpc/unary", 10, 1), ("grpc/unary", 10, 8),
                                                   ("grpc/unary", 100, 1), ("grpc/unary", 100, 8)])

    def test_the_warm_up_is_ten_seconds_of_load_and_zero_turns_it_off(self):
        self.assertEqual(Settings.from_env({}).warmup_s, 10.0)
        self.assertEqual(Settings.from_env({"WARMUP_SECONDS": "0"}).warmup_s, 0.0)
        self.assertEqual(ab_output.ab_command("http://h/p", 10_000_000, 100, 120, None, seconds=10),
                         ["ab", "-t", "10", "-n", "10000000", "-c", "100", "-s", "120", "-q", "-r", "http://h/p"])

    def test_replicas_default_to_one_and_are_bounded(self):
        self.assertEqual(Settings.from_env({}).replicas, 1)
        self.assertEqual(Settings.from_env({"REPLICAS": "2"}).replicas, 2)
        with self.assertRaisesRegex(SettingsError, "REPLICAS must be at most 8, got 9"):
            Settings.from_env({"REPLICAS": "9"})
        with self.assertRaisesRegex(SettingsError, "REPLICAS must be at least 1, got 0"):
            Settings.from_env({"REPLICAS": "0"})

    def test_bad_knobs_are_refused_with_their_name(self):
        for env, message in (({"REQUESTS": "many"}, "REQUESTS"), ({"N": "-1"}, "N must not be negative"),
                             ({"CONCURRENCY": "0"}, "CONCURRENCY"), ({"REQUESTS": "10", "CONCURRENCY": "20"}, "above"),
                             ({"PATHS": "nope"}, "unknown path"), ({"N": "5 5"}, "repeat")):
            with self.subTest(env=env), self.assertRaisesRegex(SettingsError, message):
                Settings.from_env(env)


if __name__ == "__main__":
    unittest.main()
