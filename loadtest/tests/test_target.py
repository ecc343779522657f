"""TARGET: what the lab reads of services it did not start, and what it refuses to be told with them. The whole mode,
on real services started on other ports than the lab's, is the Maven build's target run (loadtest/pom.xml)."""

import unittest

from lab import check_results, target
from lab.catalogue import AGGREGATOR, SQUARE_GRPC, SQUARE_REST
from lab.errors import LabError, SettingsError
from lab.settings import Settings


class ActuatorsTests(unittest.TestCase):
    def test_given_actuators_are_listed_by_module_each_replica_in_order(self):
        found = target.given_actuators(
            "square-grpc-service=http://b:6566/actuator, square-grpc-service=http://c:6566/actuator/,"
            "square-rest-service=https://b:7575/actuator"
        )

        self.assertEqual(
            found,
            {
                SQUARE_GRPC: ["http://b:6566/actuator", "http://c:6566/actuator"],
                SQUARE_REST: ["https://b:7575/actuator"],
            },
        )

    def test_an_unknown_module_or_a_url_that_is_no_actuator_is_refused_in_words(self):
        with self.assertRaisesRegex(LabError, "module one of aggregator-service, square-rest-service"):
            target.given_actuators("square-soap-service=http://b:1/actuator")
        with self.assertRaisesRegex(LabError, "must be an http\\(s\\) URL ending in /actuator, got 'http://b:6566'"):
            target.given_actuators("square-grpc-service=http://b:6566")

    def test_the_grpc_square_services_actuator_is_the_port_after_its_grpc_port(self):
        self.assertEqual(target._grpc_actuator("10.0.0.7:6565"), "http://10.0.0.7:6566/actuator")
        self.assertEqual(target._grpc_actuator("dns:///square-grpc:6565"), "http://square-grpc:6566/actuator")
        with self.assertRaisesRegex(LabError, "TARGET_ACTUATORS=square-grpc-service="):
            target._grpc_actuator("square-grpc")

    def test_over_tls_the_rest_square_services_actuator_must_be_given(self):
        self.assertEqual(target._rest_actuator("http://b:7575"), "http://b:7575/actuator")
        with self.assertRaisesRegex(LabError, "TARGET_ACTUATORS=square-rest-service=http://<host>"):
            target._rest_actuator("https://b:7443")

    def test_a_url_that_answers_nothing_is_named(self):
        with self.assertRaisesRegex(LabError, "cannot read http://127.0.0.1:1/actuator/info"):
            target.discover("http://127.0.0.1:1", {}, ["grpc/unary"], timeout_s=2)


class CountersTests(unittest.TestCase):
    def test_cpu_over_a_window_is_the_counters_difference(self):
        usage = target.usage_between(
            SQUARE_GRPC, target.Counters(10.0, 1, 1, (5.0,)), target.Counters(11.5, 1, 1, (5.0,)), 3.0
        )

        self.assertEqual(usage, {"seconds": 1.5, "percent": 50.0, "read": "actuator"})

    def test_a_replica_that_restarted_in_the_window_gives_no_figure(self):
        with self.assertRaisesRegex(LabError, "square-grpc-service restarted during the measured window"):
            target.usage_between(
                SQUARE_GRPC, target.Counters(10.0, 1, 1, (5.0,)), target.Counters(0.5, 1, 1, (60.0,)), 3.0
            )

    def test_a_peak_that_rose_in_the_window_is_its_own_and_one_that_did_not_is_since_start(self):
        mib = target.MIB
        rose = target.peak_mib(target.Counters(0, 100 * mib, 120 * mib), target.Counters(0, 130 * mib, 140 * mib))
        held = target.peak_mib(target.Counters(0, 100 * mib, 150 * mib), target.Counters(0, 110 * mib, 150 * mib))

        self.assertEqual(rose, (140.0, True))
        self.assertEqual(held, (150.0, False))

    def test_prometheus_reads_a_counter_from_its_last_sample_before_the_window_to_its_first_after(self):
        # Scraped every 5 s: the window [102, 113] lies between the samples at 100 and 115.
        samples = [(100.0, 5.0), (105.0, 8.0), (110.0, 14.0), (115.0, 15.0)]

        self.assertEqual(target._across(samples, 102.0, 113.0, AGGREGATOR, "pod-a"), 10.0)

    def test_prometheus_without_a_sample_on_each_side_or_with_a_restart_gives_no_figure(self):
        with self.assertRaisesRegex(
            LabError, "no sample of aggregator-service \\(pod pod-a\\) after the measured window"
        ):
            target._across([(100.0, 5.0), (105.0, 8.0)], 102.0, 113.0, AGGREGATOR, "pod-a")
        with self.assertRaisesRegex(LabError, "aggregator-service's pod pod-a restarted around the measured window"):
            target._across([(100.0, 5.0), (105.0, 1.0), (115.0, 3.0)], 102.0, 113.0, AGGREGATOR, "pod-a")

    def test_prometheus_durations(self):
        self.assertEqual([target.duration_s(text) for text in ("5s", "500ms", "1m", "1m30s")], [5.0, 0.5, 60.0, 90.0])
        with self.assertRaisesRegex(LabError, "not a Prometheus duration: 'soon'"):
            target.duration_s("soon")

    def test_a_service_in_a_pod_behind_one_address_is_refused_without_prometheus(self):
        remote = target.Remote(SQUARE_REST, ["http://square-rest-service:7575/actuator"], where=[{"pod": "rest-1"}])

        with self.assertRaisesRegex(
            LabError, "square-rest-service at .* runs in a pod \\(rest-1\\).*TARGET_PROMETHEUS"
        ):
            target._refuse_pods_behind_one_address([remote], {})
        target._refuse_pods_behind_one_address([remote], {SQUARE_REST: remote.actuators})


class TargetSettingsTests(unittest.TestCase):
    def test_target_measures_no_floor_and_one_part_a_repeat_with_prometheus(self):
        settings = Settings.from_env(
            {"TARGET": "http://host-a:8080/", "TARGET_PROMETHEUS": "http://prometheus:9090", "DURATION": "20"}
        )

        self.assertEqual(settings.target, "http://host-a:8080")
        self.assertFalse(settings.floor)
        self.assertEqual(settings.parts, 1)
        self.assertEqual(Settings.from_env({"DURATION": "20"}).parts, 4)

    def test_what_chooses_how_the_lab_starts_its_services_is_refused_with_target(self):
        with self.assertRaisesRegex(SettingsError, "REST_SERVER and TLS choose how the lab starts its own services"):
            Settings.from_env({"TARGET": "http://host-a:8080", "REST_SERVER": "tomcat", "TLS": "on"})
        with self.assertRaisesRegex(SettingsError, "JAVA_OPTS chooses"):
            Settings.from_env({"TARGET": "http://host-a:8080", "JAVA_OPTS": ""})
        with self.assertRaisesRegex(SettingsError, "NETWORK chooses"):
            Settings.from_env({"TARGET": "http://host-a:8080", "NETWORK": "lan"})
        with self.assertRaisesRegex(SettingsError, "give the one that scrapes your services as TARGET_PROMETHEUS"):
            Settings.from_env({"TARGET": "http://host-a:8080", "PROMETHEUS": "1"})

    def test_target_knobs_without_target_and_a_url_that_is_none_are_refused(self):
        with self.assertRaisesRegex(SettingsError, "TARGET_PROMETHEUS is for TARGET"):
            Settings.from_env({"TARGET_PROMETHEUS": "http://prometheus:9090"})
        with self.assertRaisesRegex(SettingsError, "TARGET must be an http:// or https:// URL .*, got 'host-a:8080'"):
            Settings.from_env({"TARGET": "host-a:8080"})


class ReadTwiceTests(unittest.TestCase):
    def run_with(self, proc_s, own_s):
        return {"repeats": [{"cpu_read_twice": {AGGREGATOR: {"proc_s": proc_s, "own_s": own_s}}}]}

    def test_proc_and_the_services_own_counter_agree_within_a_tick_and_the_scrapes(self):
        self.assertEqual(check_results.cpu_read_twice_problems(self.run_with(2.55, 2.57)), [])

    def test_a_window_of_little_cpu_is_not_held_to_agree(self):
        self.assertEqual(check_results.cpu_read_twice_problems(self.run_with(0.09, 0.18)), [])

    def test_the_slack_grows_with_the_parts_read_at_their_own_ticks(self):
        run = self.run_with(2.0, 2.3)
        self.assertEqual(len(check_results.cpu_read_twice_problems(run)), 1)
        run["repeats"][0]["parts"] = 4
        self.assertEqual(check_results.cpu_read_twice_problems(run), [])

    def test_a_counter_that_could_not_be_read_beside_proc_is_a_problem(self):
        run = {"cpu": {AGGREGATOR: {"seconds": 1.0, "own_error": "cannot read http://x: refused"}}, "repeats": []}
        self.assertEqual(
            check_results.cpu_read_twice_problems(run),
            ["aggregator-service's own CPU counter could not be read beside /proc: cannot read http://x: refused"],
        )

    def test_a_disagreement_is_a_problem_naming_both_figures(self):
        self.assertEqual(
            check_results.cpu_read_twice_problems(self.run_with(2.0, 2.4)),
            [
                "repeat 1: aggregator-service's CPU was 2.000 s by /proc but 2.400 s by its own "
                "process_cpu_time_ns_total"
            ],
        )


if __name__ == "__main__":
    unittest.main()
