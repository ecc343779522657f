"""What each path must answer, which services it needs, and how the knobs are read."""

import contextlib
import dataclasses
import io
import os
import re
import tempfile
import unittest

from lab import __main__ as lab_main
from lab.core import catalogue
from lab.core import settings as knobs
from lab.core.errors import SettingsError
from lab.core.settings import JVM_OPTIONS_FILE, Settings, service_jvm_options
from lab.load import ab_output


class PathTests(unittest.TestCase):
    def test_the_aggregators_answer_is_the_contracts_exact_json(self):
        rest = catalogue.ALL["rest/unary"]

        self.assertEqual(rest.expected_body(3), '[{"1":1},{"2":4},{"3":9}]')
        self.assertEqual(rest.expected_body(0), "[]")
        self.assertEqual(catalogue.ALL["grpc/stream"].expected_body(1), '[{"1":1}]')

    def test_the_rest_square_baseline_answers_a_bare_number(self):
        self.assertEqual(catalogue.ALL["rest/square"].expected_body(65536), "4294967296")
        self.assertEqual(catalogue.ALL["rest/square"].calls_per_request(65536), 1)

    def test_urls_come_from_the_services_base_urls(self):
        urls = {"aggregator-service": "http://127.0.0.1:8080"}

        self.assertEqual(catalogue.ALL["grpc/unary"].url(urls, 10), "http://127.0.0.1:8080/grpc/unary/10")

    def test_a_payload_shape_is_asked_for_in_the_query_and_small_keeps_the_articles_url(self):
        urls = {"aggregator-service": "http://127.0.0.1:8080"}

        self.assertEqual(
            catalogue.ALL["rest/unary"].url(urls, 10, "collection"),
            "http://127.0.0.1:8080/rest/unary/10?payload=collection",
        )
        self.assertEqual(catalogue.ALL["rest/unary"].url(urls, 10, "small"), "http://127.0.0.1:8080/rest/unary/10")

    def test_an_unknown_payload_shape_names_the_known_ones(self):
        with self.assertRaises(ValueError) as caught:
            catalogue.parse_payloads("wide huge")
        self.assertEqual(
            str(caught.exception), "unknown payload shape 'huge' in PAYLOAD; known shapes: small wide deep collection"
        )

    def test_each_path_needs_the_aggregator_and_its_square_service_only(self):
        self.assertEqual(
            catalogue.services_needed(catalogue.parse("grpc/stream")), ["square-grpc-service", "aggregator-service"]
        )
        self.assertEqual(
            catalogue.services_needed(catalogue.parse(catalogue.DEFAULT)),
            ["square-rest-service", "square-grpc-service", "aggregator-service"],
        )
        self.assertEqual(catalogue.services_needed(catalogue.parse("rest/square")), ["square-rest-service"])

    def test_an_unknown_path_names_the_known_ones(self):
        with self.assertRaises(ValueError) as caught:
            catalogue.parse("rest/unary soap/unary")
        self.assertEqual(
            str(caught.exception),
            "unknown path 'soap/unary' in PATHS; known paths: rest/unary rest/h2c "
            "grpc/unary grpc/pingpong grpc/stream rest/square",
        )


class SettingsTests(unittest.TestCase):
    def test_defaults_replicate_the_article(self):
        settings = Settings.from_env({})

        # The article's 100 clients and n = 1000; each run lasts DURATION (20 s), not the article's 1000 requests,
        # so that every path is measured for as long (REQUESTS=1000 gives the article's count).
        self.assertEqual(
            (settings.requests, settings.duration_s, settings.concurrency, settings.n), (None, 20.0, [100], [1000])
        )
        self.assertEqual(Settings.from_env({"REQUESTS": "1000"}).requests, 1000)
        # Grouped: REST over HTTP/1.1 and HTTP/2, then gRPC unary, ping-pong and pipelined stream.
        self.assertEqual(settings.paths, ["rest/unary", "rest/h2c", "grpc/unary", "grpc/pingpong", "grpc/stream"])

    def test_the_services_jvm_options_default_to_the_repositorys_file(self):
        self.assertEqual(os.path.basename(JVM_OPTIONS_FILE), "jvm.options")
        self.assertEqual(Settings.from_env({}).java_opts, service_jvm_options())
        self.assertIn("-XX:+ExitOnOutOfMemoryError", Settings.from_env({}).java_opts.split())
        # Set, even empty (JVM defaults), JAVA_OPTS replaces the file's options.
        self.assertEqual(Settings.from_env({"JAVA_OPTS": "-Xmx1g"}).java_opts, "-Xmx1g")
        self.assertEqual(Settings.from_env({"JAVA_OPTS": ""}).java_opts, "")

    def test_the_jvm_options_file_is_read_as_java_reads_an_argument_file(self):
        with tempfile.NamedTemporaryFile("w", suffix=".options", delete=False) as options:
            options.write("# a comment\n-XX:+UseSerialGC\n\n  -Xmx128m  \n# -Xss1m\n-Xss512k\n")
        self.addCleanup(os.unlink, options.name)

        self.assertEqual(service_jvm_options(options.name), "-XX:+UseSerialGC -Xmx128m -Xss512k")

    def test_lists_of_concurrency_and_n_sweep_every_combination(self):
        settings = Settings.from_env({"CONCURRENCY": "1 8", "N": "10 100", "REQUESTS": "40", "PATHS": "grpc/unary"})

        self.assertEqual(
            settings.combinations(),
            [
                ("grpc/unary", "small", 10, 1),
                ("grpc/unary", "small", 10, 8),
                ("grpc/unary", "small", 100, 1),
                ("grpc/unary", "small", 100, 8),
            ],
        )

    def test_the_warm_up_is_ten_seconds_of_load_and_zero_turns_it_off(self):
        self.assertEqual(Settings.from_env({}).warmup_s, 10.0)
        self.assertEqual(Settings.from_env({"WARMUP_SECONDS": "0", "REQUESTS": "1000"}).warmup_s, 0.0)
        # Without a warm-up, nothing says how many requests last DURATION: a fixed count is needed.
        with self.assertRaisesRegex(
            SettingsError, "WARMUP_SECONDS=0 leaves DURATION no pace to count ab's requests from: set REQUESTS"
        ):
            Settings.from_env({"WARMUP_SECONDS": "0"})
        self.assertEqual(
            ab_output.ab_command("http://h/p", 10_000_000, 100, 120, None, seconds=10),
            ["ab", "-t", "10", "-n", "10000000", "-c", "100", "-s", "120", "-q", "-r", "http://h/p"],
        )

    def test_replicas_default_to_one_and_are_bounded(self):
        self.assertEqual(Settings.from_env({}).replicas, 1)
        self.assertEqual(Settings.from_env({"REPLICAS": "2"}).replicas, 2)
        with self.assertRaisesRegex(SettingsError, "REPLICAS must be at most 8, got 9"):
            Settings.from_env({"REPLICAS": "9"})
        with self.assertRaisesRegex(SettingsError, "REPLICAS must be at least 1, got 0"):
            Settings.from_env({"REPLICAS": "0"})

    def test_one_small_payload_on_loopback_by_default(self):
        settings = Settings.from_env({})

        self.assertEqual((settings.payload, settings.network, settings.proxied), (["small"], ["loopback"], False))
        self.assertEqual(
            {key: settings.as_dict()[key] for key in ("payload", "network")},
            {"payload": ["small"], "network": ["loopback"]},
        )

    def test_every_path_is_measured_with_every_payload_shape(self):
        settings = Settings.from_env(
            {
                "PATHS": "rest/unary grpc/unary",
                "PAYLOAD": "small collection",
                "N": "20",
                "CONCURRENCY": "2",
                "REQUESTS": "10",
            }
        )

        self.assertEqual(
            settings.combinations(),
            [
                ("rest/unary", "small", 20, 2),
                ("rest/unary", "collection", 20, 2),
                ("grpc/unary", "small", 20, 2),
                ("grpc/unary", "collection", 20, 2),
            ],
        )
        self.assertTrue(settings.floor)

    def test_networks_in_the_order_given_and_the_proxy_only_for_those_that_need_it(self):
        self.assertEqual(Settings.from_env({"NETWORK": "wan loopback wan"}).network, ["wan", "loopback"])
        self.assertTrue(Settings.from_env({"NETWORK": "loopback proxy"}).proxied)
        with self.assertRaisesRegex(
            SettingsError, "unknown network 'moon' in NETWORK; known networks: loopback proxy hosts lan wan"
        ):
            Settings.from_env({"NETWORK": "moon"})

    def test_the_floor_runs_only_when_there_is_a_small_payload_on_loopback_to_compare(self):
        self.assertTrue(Settings.from_env({"PAYLOAD": "small wide", "NETWORK": "loopback lan"}).floor)
        self.assertFalse(Settings.from_env({"PAYLOAD": "wide"}).floor)
        self.assertFalse(Settings.from_env({"NETWORK": "lan"}).floor)

    def test_the_rest_square_baseline_has_no_payload_shape_and_no_network(self):
        with self.assertRaisesRegex(
            SettingsError, "rest/square is a baseline straight to square-rest-service and carries no payload shape"
        ):
            Settings.from_env({"PATHS": "rest/square", "PAYLOAD": "small wide"})
        with self.assertRaisesRegex(
            SettingsError, "rest/square does not go through the aggregator, so NETWORK does not reach it"
        ):
            Settings.from_env({"PATHS": "rest/unary rest/square", "NETWORK": "lan"})

    def test_the_proxies_ports_must_fit_below_65536(self):
        with self.assertRaisesRegex(SettingsError, "PROXY_PORT 65534 leaves no room for 4 proxies below port 65535"):
            Settings.from_env({"NETWORK": "lan", "PROXY_PORT": "65534", "REPLICAS": "2"})

    def test_bad_knobs_are_refused_with_their_name(self):
        for env, message in (
            ({"REQUESTS": "many"}, "REQUESTS"),
            ({"N": "-1"}, "N must not be negative"),
            ({"CONCURRENCY": "0"}, "CONCURRENCY"),
            ({"REQUESTS": "10", "CONCURRENCY": "20"}, "above"),
            ({"PATHS": "nope"}, "unknown path"),
            ({"N": "5 5"}, "repeat"),
            ({"PAYLOAD": "huge"}, "unknown payload shape 'huge' in PAYLOAD"),
            ({"TOXIPROXY_PORT": "70000"}, "TOXIPROXY_PORT must be a port number"),
        ):
            with self.subTest(env=env), self.assertRaisesRegex(SettingsError, message):
                Settings.from_env(env)


README = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "README.md")


class KnobTableTests(unittest.TestCase):
    def test_the_readmes_knob_table_is_the_generated_one(self):
        with open(README, encoding="utf-8") as readme:
            text = readme.read()
        found = re.search(r"<!-- generated by `python3 -m lab knobs --markdown`.*?-->\n(.*?)<!-- end of", text, re.S)

        self.assertIsNotNone(found, "loadtest/README.md has no generated knob table")
        self.assertEqual(
            found.group(1).strip().splitlines(),
            knobs.markdown().splitlines(),
            "loadtest/README.md's knob table differs from KNOBS: paste `python3 -m lab knobs --markdown` into it",
        )

    def test_every_section_a_knob_points_to_is_a_heading_of_the_readme(self):
        with open(README, encoding="utf-8") as readme:
            headings = re.findall(r"(?m)^#+ (.+)$", readme.read())

        for knob in knobs.KNOBS:
            if knob.see:
                self.assertIn(knob.see, headings, knob.name)

    def test_the_knobs_fill_every_setting_once(self):
        filled = [knob.field for knob in knobs.KNOBS]

        self.assertEqual(sorted(filled), sorted(field.name for field in dataclasses.fields(Settings)))
        self.assertEqual(len({knob.name for knob in knobs.KNOBS}), len(knobs.KNOBS))

    def test_results_json_records_the_measuring_knobs_in_the_order_it_always_has(self):
        keys = list(Settings.from_env({}).as_dict())

        self.assertEqual(
            keys,
            [
                "requests",
                "concurrency",
                "n",
                "paths",
                "warmup_s",
                "ab_timeout_s",
                "repeats",
                "payload",
                "network",
                "rest_server",
                "rest_client",
                "mix",
                "java_homes",
                "spring",
                "virtual_threads",
                "load",
                "duration_s",
                "floor",
                "floor_warmup_s",
                "floor_duration_s",
                "replicas",
                "java_opts",
                "aggregator_args",
                "cpus",
                "tls",
                "tls_provider",
                "target",
                "target_actuators",
                "target_prometheus",
                "expect",
                "baseline",
                "parts",
            ],
        )
        # An open loop records its rates, and neither a number of requests nor clients.
        recorded = Settings.from_env({"LOAD": "open", "RATE": "10 20"}).as_dict()
        self.assertEqual((recorded["rate"], recorded["requests"], recorded["concurrency"]), ([10, 20], None, []))

    def test_help_lists_every_knob_with_its_default(self):
        shown = knobs.usage()

        for knob in knobs.KNOBS:
            self.assertRegex(shown, r"(?m)^  %s +\S" % knob.name)
        self.assertIn("[100]", re.search(r"(?ms)^  CONCURRENCY .*?\]", shown).group(0))

    def test_the_knobs_command_prints_the_markdown_table(self):
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            status = lab_main.main(["knobs", "--markdown"])

        self.assertEqual((status, printed.getvalue()), (0, knobs.markdown() + "\n"))


if __name__ == "__main__":
    unittest.main()


class DurationTests(unittest.TestCase):
    def test_a_run_by_time_asks_ab_for_whole_rounds_that_last_about_duration(self):
        from lab.load.load_generator import requests_for

        # 45 a second for 20 s at 100 clients: 900 requests, 9 rounds of 100.
        self.assertEqual(requests_for(45.0, 100, 20), 900)
        # 48.6 a second: 972 requests rounds to 10 rounds, not a part of one.
        self.assertEqual(requests_for(48.6, 100, 20), 1000)
        # A path slower than one round in DURATION still gets one round.
        self.assertEqual(requests_for(2.0, 100, 20), 100)
        self.assertEqual(requests_for(0.0, 100, 20), 100)
        # A fast path: 3,000 a second at 10 clients, 60,000 requests.
        self.assertEqual(requests_for(3000.0, 10, 20), 60000)
