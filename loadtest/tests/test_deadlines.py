"""The deadlines and timeouts of each network: loopback as the lab always had them, a slow network's long enough."""

import os
import tempfile
import unittest

from lab.core import catalogue
from lab.core.errors import LabError
from lab.core.settings import Settings
from lab.stage import deadlines


def on(profile, **env):
    return deadlines.for_network(catalogue.PROFILES[profile], Settings.from_env(env))


class DeadlineTests(unittest.TestCase):
    def test_loopback_and_a_bare_proxy_keep_ab_timeout_and_the_aggregators_call_deadline(self):
        for name in ("loopback", "proxy"):
            with self.subTest(network=name):
                limits = on(name)
                self.assertEqual((limits.request_s, limits.call_s, limits.client_timeout_s), (120, None, 120))

    def test_wan_at_the_articles_load_waits_for_the_rest_pool_and_the_grpc_connections_bytes(self):
        request, call = deadlines.slowest(catalogue.PROFILES["wan"], Settings.from_env({}))

        # A request: 1000 calls of 20 ms, 100 requests sharing 64 connections (x 1.5625), plus 100,000 calls of 200
        # bytes on one 100 Mbit/s connection (1.6 s). A call: behind 800 others on 64 connections, 14 round trips,
        # plus 800 calls' bytes.
        self.assertAlmostEqual(request, 31.25 + 1.6)
        self.assertAlmostEqual(call, 0.28 + 0.0128)
        limits = on("wan")
        self.assertEqual((limits.request_s, limits.call_s, limits.client_timeout_s), (120 + 66, 10 + 1, 120 + 66))
        self.assertEqual(
            limits.how,
            "AB_TIMEOUT + 66 s for the request and the load generator, 10 s + 1 s for a "
            "call: twice the slowest request (32.85 s) and call (0.29 s) the measured "
            "combinations could need on wan",
        )

    def test_the_slowest_combination_of_a_sweep_and_the_largest_shape_set_them(self):
        request, _ = deadlines.slowest(
            catalogue.PROFILES["wan"],
            Settings.from_env({"N": "10 100", "CONCURRENCY": "1 4", "REQUESTS": "20", "PAYLOAD": "small collection"}),
        )

        # n = 100 at c = 4: 100 round trips of 20 ms; 400 collection calls of 6500 bytes at 100 Mbit/s.
        self.assertAlmostEqual(request, 2.0 + 400 * 6500 * 8 / 1e8)

    def test_aggregator_args_in_flight_and_pool_size_count(self):
        _, call = deadlines.slowest(
            catalogue.PROFILES["lan"],
            Settings.from_env(
                {"AGGREGATOR_ARGS": "--aggregator.in-flight=1 --aggregator.rest.max-connections=10", "REQUESTS": "100"}
            ),
        )

        # 100 requests x 1 call in flight on 10 connections: 10 round trips + 1 of 0.5 ms; 100 calls' bytes at 1 Gbit/s.
        self.assertAlmostEqual(call, 11 * 0.0005 + 100 * 200 * 8 / 1e9)
        self.assertEqual(deadlines.aggregator_option("--aggregator.in-flight=3 --x=1", "aggregator.in-flight", 8), 3)
        self.assertEqual(deadlines.aggregator_option("", "aggregator.in-flight", 8), 8)

    def test_the_aggregators_defaults_are_read_from_its_application_yml(self):
        found = deadlines.aggregator_defaults()

        self.assertEqual(found, deadlines.AggregatorDefaults(8, 64, 10))
        repo = os.path.join(os.path.dirname(__file__), "..", "..")
        self.assertTrue(
            os.path.samefile(
                deadlines.AGGREGATOR_YML,
                os.path.join(repo, "aggregator-core", "src", "main", "resources", "application.yml"),
            )
        )

    def test_each_default_is_found_under_its_own_parent_key(self):
        yml = (
            "aggregator:\n"
            "  # a comment: with a colon\n"
            "  in-flight: 3  # trailing comment\n"
            "  call-deadline: 2500ms\n"
            "  admission:\n"
            "    max-connections: 0\n"
            "  rest:\n"
            "    base-url: http://127.0.0.1:7575\n"
            "    max-connections: 12\n"
            "server:\n"
            "  max-connections: 99\n"
        )
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "application.yml")
            with open(path, "w", encoding="utf-8") as out:
                out.write(yml)

            self.assertEqual(deadlines.aggregator_defaults(path), deadlines.AggregatorDefaults(3, 12, 3))
        self.assertEqual(deadlines.yaml_scalars(yml)["aggregator.rest.base-url"], "http://127.0.0.1:7575")
        self.assertEqual((deadlines.duration_s("10s"), deadlines.duration_s("1m")), (10, 60))

    def test_a_missing_default_or_an_unknown_unit_says_where_and_what(self):
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "application.yml")
            with open(path, "w", encoding="utf-8") as out:
                out.write("aggregator:\n  in-flight: 8\n  call-deadline: 10h\n  rest:\n    max-connections: 64\n")
            with self.assertRaises(LabError) as unknown_unit:
                deadlines.aggregator_defaults(path)
            with self.assertRaises(LabError) as missing:
                deadlines.aggregator_defaults(os.path.join(folder, "nowhere.yml"))

        self.assertIn(
            "call-deadline from %s: '10h' is not a duration of ms, s or m" % path, str(unknown_unit.exception)
        )
        self.assertIn("nowhere.yml", str(missing.exception))


if __name__ == "__main__":
    unittest.main()
