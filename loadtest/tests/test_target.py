"""TARGET: what the lab reads of services it did not start, and what it refuses to be told with them. The whole mode,
on real services started on other ports than the lab's, is the Maven build's target run (loadtest/pom.xml)."""

import unittest

from lab.core import metrics
from lab.core.catalogue import AGGREGATOR, SQUARE_GRPC, SQUARE_REST
from lab.core.errors import LabError, SettingsError
from lab.core.settings import Settings
from lab.measure import bench
from lab.results import check_results
from lab.stage import target


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


class PrometheusWindowTests(unittest.TestCase):
    """Prometheus's answers as its HTTP API gives them (the real one is the Maven build's target run)."""

    def prometheus(self, series, instances, offset=0.0):
        prometheus = target.Prometheus("http://prometheus:9090")
        prometheus.instances = instances
        prometheus.scrape_interval_s = 5.0
        prometheus.clock_offset_s = offset
        answers = {
            metric: [{"metric": dict(labels, __name__=metric), "values": values} for labels, values in found]
            for metric, found in series.items()
        }
        prometheus._api = lambda path, query, time: {"result": answers[query.split("[")[0]]}
        return prometheus

    def series(self, instance, cpu, application=AGGREGATOR):
        labels = {"application": application, "instance": instance}
        return labels, [[at, str(value)] for at, value in cpu]

    def test_only_the_targets_found_are_read_not_another_copy_of_the_same_application(self):
        ours = self.series("10.0.0.1:8080", [(100.0, 1e9), (115.0, 3e9)])
        theirs = self.series("10.9.9.9:8080", [(100.0, 1e9), (115.0, 90e9)])
        peak = self.series("10.0.0.1:8080", [(100.0, 100 * target.MIB), (115.0, 120 * target.MIB)])
        prometheus = self.prometheus(
            {target.CPU_METRIC: [ours, theirs], target.RESIDENT_PEAK: [peak]}, {AGGREGATOR: {"10.0.0.1:8080"}}
        )

        found = prometheus.window([AGGREGATOR], 102.0, 112.0)[AGGREGATOR]

        self.assertEqual((found["seconds"], found["percent"], found["pods"]), (2.0, 20.0, ["10.0.0.1:8080"]))
        self.assertEqual((found["peak_mib"], found["own_peak"]), (120.0, True))

    def test_a_target_found_that_has_no_series_around_the_window_is_named(self):
        ours = self.series("10.0.0.1:8080", [(100.0, 1e9), (115.0, 3e9)])
        prometheus = self.prometheus(
            {target.CPU_METRIC: [ours], target.RESIDENT_PEAK: []}, {AGGREGATOR: {"10.0.0.1:8080", "10.0.0.2:8080"}}
        )

        with self.assertRaisesRegex(LabError, "no process_cpu_time_ns_total of aggregator-service's 10.0.0.2:8080"):
            prometheus.window([AGGREGATOR], 102.0, 112.0)

    def test_the_window_is_moved_to_prometheus_clock(self):
        # Prometheus's clock is 50 s ahead: the lab's window [52, 62] is its [102, 112].
        ours = self.series("10.0.0.1:8080", [(50.0, 0.0), (100.0, 1e9), (115.0, 3e9)])
        prometheus = self.prometheus(
            {target.CPU_METRIC: [ours], target.RESIDENT_PEAK: []}, {AGGREGATOR: {"10.0.0.1:8080"}}, offset=50.0
        )

        self.assertEqual(prometheus.window([AGGREGATOR], 52.0, 62.0)[AGGREGATOR]["seconds"], 2.0)

    def test_a_prometheus_not_answering_yet_is_waited_for_and_named_if_it_never_does(self):
        prometheus = target.Prometheus("http://prometheus:9090")
        answers = [LabError("cannot read http://prometheus:9090/api/v1/targets: refused"), {AGGREGATOR: ["http://a"]}]

        def scraped(modules):
            answer = answers.pop(0) if answers else LabError("cannot read it: refused")
            if isinstance(answer, LabError):
                raise answer
            return answer

        prometheus._scraped = scraped
        prometheus._clock_offset = lambda: 0.0

        self.assertEqual(prometheus.actuators([AGGREGATOR], wait_s=5.0), {AGGREGATOR: ["http://a"]})
        with self.assertRaisesRegex(LabError, "cannot read it: refused"):
            prometheus.actuators([AGGREGATOR], wait_s=0.0)

    def test_a_memory_gauge_the_service_could_not_read_counts_as_none(self):
        samples = metrics.parse("process_memory_resident_bytes NaN\nprocess_memory_resident_peak_bytes 1048576.0\n")

        self.assertEqual(
            (target._bytes(samples, target.RESIDENT), target._bytes(samples, target.RESIDENT_PEAK)), (0.0, 1048576.0)
        )


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

    def test_one_parts_failure_to_read_the_counter_is_the_whole_runs(self):
        machine = {"seconds": 2.0, "percent": 100.0}
        read = {"machine": machine, AGGREGATOR: {"seconds": 1.0, "own_seconds": 1.01}}
        failed = {"machine": machine, AGGREGATOR: {"seconds": 1.0, "own_error": "cannot read http://x: refused"}}

        added = bench._added_usage([read, failed])[AGGREGATOR]

        self.assertEqual(added, {"seconds": 2.0, "percent": 50.0, "own_error": "cannot read http://x: refused"})

    def test_the_aggregators_slack_does_not_grow_with_the_square_services_replicas(self):
        run = self.run_with(2.0, 2.3)
        run["repeats"][0]["cpu_read_twice"][SQUARE_GRPC] = {"proc_s": 2.0, "own_s": 2.3}

        problems = check_results.cpu_read_twice_problems(run, replicas=4)

        self.assertEqual(len(problems), 1)
        self.assertIn("aggregator-service's CPU was 2.000 s", problems[0])

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
