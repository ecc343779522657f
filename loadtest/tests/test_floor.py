"""The transport floor: the aggregator's window in each combination, a floor run's orchestration (a fake java
standing in for the floor's JVMs: it serves, measures, fails or hangs as the real ones would), and each path's
fraction of its floor. The real jar runs in the Maven build's small lab run."""

import json
import os
import shutil
import stat
import tempfile
import textwrap
import time
import unittest

from lab.core import windows
from lab.core.errors import FloorError, SettingsError
from lab.core.settings import Settings
from lab.host.processes import Processes
from lab.measure import floor
from lab.measure.floor import Window
from lab.results import check_results, floors
from lab.stage import tls

from tests.support import AGGREGATOR_DEFAULTS, FIXTURES, FLOOR_C5_N50, LAB_JAVA_OPTS, sample_results, sample_with_floor

DEFAULTS = AGGREGATOR_DEFAULTS


def settings(paths="rest/unary grpc/unary grpc/stream", n=(1000,), concurrency=(100,), aggregator=None):
    return {
        "paths": paths.split(),
        "n": list(n),
        "concurrency": list(concurrency),
        "aggregator": aggregator or dict(DEFAULTS),
    }


class AggregatorSettingsTests(unittest.TestCase):
    def test_read_from_the_aggregators_actuator_info(self):
        info = {
            "aggregator": {
                "in-flight": 8,
                "rest-max-connections": 64,
                "rest-replicas": 1,
                "deadline-ms": 120000,
                "call-deadline-ms": 10000,
                "max-n": 100000,
            }
        }

        self.assertEqual(windows.aggregator_settings(info), DEFAULTS)

    def test_the_http2_connections_when_the_aggregator_has_them(self):
        info = {
            "aggregator": {
                "in-flight": 8,
                "rest-max-connections": 64,
                "rest-replicas": 2,
                "rest-h2c-connections": 4,
                "rest-h2c-max-streams": 200,
            }
        }

        self.assertEqual(
            windows.aggregator_settings(info),
            {
                "in_flight": 8,
                "rest_max_connections": 64,
                "rest_replicas": 2,
                "rest_h2c_connections": 4,
                "rest_h2c_max_streams": 200,
            },
        )

    def test_an_info_document_without_them_is_an_error_that_shows_it(self):
        with self.assertRaisesRegex(FloorError, "no aggregator in-flight.*from before.*'app'"):
            windows.aggregator_settings({"app": {}})

    def test_results_without_them_have_no_plan(self):
        with self.assertRaisesRegex(FloorError, "settings.aggregator"):
            windows.plan({"paths": ["grpc/unary"], "n": [10], "concurrency": [1]})
        # The baseline alone needs none.
        self.assertEqual(windows.plan({"paths": ["rest/square"], "n": [10], "concurrency": [1]}), ([], {}))


class WindowTests(unittest.TestCase):
    def test_the_default_load(self):
        # ab -c 100 against /path/1000: 100 requests x 8 calls in flight, the pool's 64 connections, 100 streams.
        self.assertEqual(windows.window_for("grpc/unary", 1000, 100, DEFAULTS), Window("grpc_unary", in_flight=800))
        self.assertEqual(windows.window_for("rest/unary", 1000, 100, DEFAULTS), Window("rest_unary", connections=64))
        self.assertEqual(
            windows.window_for("grpc/stream", 1000, 100, DEFAULTS),
            Window("grpc_stream", streams=100, messages_per_stream=1000),
        )

    def test_the_http2_and_ping_pong_windows(self):
        h2c = dict(DEFAULTS, rest_h2c_connections=4, rest_h2c_max_streams=200)

        # 800 calls in flight, multiplexed on the aggregator's 4 HTTP/2 connections of up to 200 streams.
        self.assertEqual(windows.window_for("rest/h2c", 1000, 100, h2c), Window("rest_h2c", connections=4, streams=800))
        # 2048 calls wanted, 800 on the connections, the rest waiting in the aggregator's pool.
        self.assertEqual(windows.window_for("rest/h2c", 1000, 256, h2c), Window("rest_h2c", connections=4, streams=800))
        self.assertEqual(
            windows.window_for("rest/h2c", 1000, 100, dict(h2c, rest_replicas=3)),
            Window("rest_h2c", connections=12, streams=800),
        )
        self.assertEqual(windows.window_for("rest/h2c", 1, 1, h2c), Window("rest_h2c", connections=1, streams=1))
        # One stream per request, n messages on it, one at a time.
        self.assertEqual(
            windows.window_for("grpc/pingpong", 1000, 100, h2c),
            Window("grpc_pingpong", streams=100, messages_per_stream=1000),
        )
        with self.assertRaisesRegex(FloorError, "no rest-h2c-connections"):
            windows.window_for("rest/h2c", 1000, 100, DEFAULTS)

    def test_other_aggregator_settings_change_the_unary_windows_only(self):
        options = {"in_flight": 32, "rest_max_connections": 128, "rest_replicas": 1}

        self.assertEqual(windows.window_for("grpc/unary", 1000, 100, options).in_flight, 3200)
        self.assertEqual(windows.window_for("rest/unary", 1000, 100, options).connections, 128)
        self.assertEqual(
            windows.window_for("grpc/stream", 1000, 100, options),
            Window("grpc_stream", streams=100, messages_per_stream=1000),
        )

    def test_each_rest_replica_has_a_pool_of_its_own(self):
        options = {"in_flight": 8, "rest_max_connections": 64, "rest_replicas": 2}

        self.assertEqual(windows.window_for("rest/unary", 1000, 100, options).connections, 128)
        self.assertEqual(windows.window_for("rest/unary", 1000, 10, options).connections, 80)
        self.assertEqual(windows.window_for("grpc/unary", 1000, 100, options).in_flight, 800)

    def test_the_articles_sequential_loop_has_one_call_per_request(self):
        options = {"in_flight": 1, "rest_max_connections": 64, "rest_replicas": 1}

        self.assertEqual(windows.window_for("grpc/unary", 1000, 100, options).in_flight, 100)
        self.assertEqual(windows.window_for("rest/unary", 1000, 100, options).connections, 64)

    def test_a_request_never_has_more_calls_in_flight_than_its_n(self):
        # n=5 is below the default in-flight of 8: 5 calls per request, not 8.
        self.assertEqual(windows.window_for("grpc/unary", 5, 8, DEFAULTS).in_flight, 40)
        self.assertEqual(windows.window_for("rest/unary", 5, 20, DEFAULTS).connections, 64)
        self.assertEqual(windows.window_for("rest/unary", 5, 1, DEFAULTS).connections, 5)
        self.assertEqual(windows.window_for("rest/unary", 1000, 1, DEFAULTS).connections, 8)

    def test_the_baseline_and_n_zero_have_no_floor(self):
        self.assertIsNone(windows.window_for("rest/square", 1000, 100, DEFAULTS))
        self.assertIsNone(windows.window_for("grpc/stream", 0, 100, DEFAULTS))

    def test_a_sweep_runs_each_distinct_window_once_in_the_order_of_the_paths(self):
        planned, by_combination = windows.plan(
            settings("rest/unary grpc/unary grpc/stream rest/square", n=(5, 100), concurrency=(1, 16))
        )

        self.assertEqual(
            [w.slug() for w in planned],
            [
                "rest_unary_c5",
                "rest_unary_c64",
                "rest_unary_c8",
                "grpc_unary_i5",
                "grpc_unary_i80",
                "grpc_unary_i8",
                "grpc_unary_i128",
                "grpc_stream_s1_m5",
                "grpc_stream_s16_m5",
                "grpc_stream_s1_m100",
                "grpc_stream_s16_m100",
            ],
        )
        # 64 connections serve both n=5 c=16 and n=100 c=16.
        self.assertEqual(by_combination[("rest/unary", 5, 16, None)], by_combination[("rest/unary", 100, 16, None)])
        self.assertEqual(len(by_combination), 12)
        self.assertNotIn(("rest/square", 5, 1, None), by_combination)

    def test_each_window_passes_exactly_its_client_options(self):
        self.assertEqual(Window("rest_unary", connections=64).client_arguments(), ["--connections", "64"])
        self.assertEqual(Window("grpc_unary", in_flight=3200).client_arguments(), ["--in-flight", "3200"])
        self.assertEqual(
            Window("grpc_stream", streams=100, messages_per_stream=1000).client_arguments(),
            ["--streams", "100", "--messages", "1000"],
        )
        self.assertEqual(
            Window("rest_h2c", connections=2, streams=800).client_arguments(),
            ["--connections", "2", "--streams", "800"],
        )
        self.assertEqual(
            Window("grpc_pingpong", streams=100, messages_per_stream=1000).client_arguments(),
            ["--streams", "100", "--messages", "1000"],
        )
        self.assertEqual(
            Window("rest_h2c", connections=2, streams=800).describe(), "800 calls in flight on 2 connections"
        )
        self.assertEqual(
            Window("grpc_pingpong", streams=100, messages_per_stream=1000).slug(), "grpc_pingpong_s100_m1000"
        )

    def test_a_floor_run_must_report_the_window_it_was_given(self):
        window = Window("grpc_stream", streams=5, messages_per_stream=50)

        self.assertEqual(window.check({"streams": 5, "messages_per_stream": 50}), [])
        self.assertEqual(
            window.check({"streams": 5, "messages_per_stream": 1000}),
            ["the floor ran with messages_per_stream=1000, the aggregator's window is 50"],
        )


class KnobTests(unittest.TestCase):
    def test_the_floor_is_on_by_default_for_ten_seconds_after_ten_of_warm_up_in_the_paths_parts(self):
        defaults = Settings.from_env({})
        self.assertEqual((defaults.floor, defaults.floor_warmup_s, defaults.floor_duration_s), (True, 10.0, 10.0))
        self.assertEqual((4, 4), (defaults.parts, defaults.floor_parts))
        # A count of requests measures each path's repeat in one stretch; the floor still takes turns.
        self.assertEqual(
            (1, 4), (Settings.from_env({"REQUESTS": "100"}).parts, Settings.from_env({"REQUESTS": "100"}).floor_parts)
        )
        self.assertEqual(Settings.from_env({"FLOOR_WARMUP": "0"}).floor_warmup_s, 0.0)
        self.assertFalse(Settings.from_env({"FLOOR": "0"}).floor)
        self.assertEqual(Settings.from_env({"FLOOR_DURATION": "2", "WARMUP_SECONDS": "0.5"}).warmup_s, 0.5)

    def test_its_knobs_are_checked_before_anything_runs(self):
        for env, message in (
            ({"FLOOR": "yes"}, "FLOOR must be 0 or 1"),
            ({"FLOOR_DURATION": "0"}, "FLOOR_DURATION must be more than 0"),
            ({"WARMUP_SECONDS": "2s"}, "WARMUP_SECONDS must be a number of seconds"),
        ):
            with self.subTest(env=env), self.assertRaisesRegex(SettingsError, message):
                Settings.from_env(env)


# A stand-in for java, run as `fake-java -jar JAR server KIND ...` or `... session`: the server prints its port and
# burns CPU until stopped; the session reads one JSON array of a run's words a line and answers each with `client`,
# a bash body that may read the run's words in $run.
FAKE_JAVA = r"""#!/usr/bin/env bash
while [[ $1 != -jar ]]; do shift; done
shift 2
role=$1
echo "$*" >> "$(dirname "$0")/calls.txt"
if [[ $role == server ]]; then
  echo $$ > "$(dirname "$0")/server.pid"
  echo "listening on 127.0.0.1:4242"
  while :; do :; done
fi
while IFS= read -r run; do
  echo "$run" >> "$(dirname "$0")/calls.txt"
%s
done
"""
GOOD_CLIENT = r"""
echo "floor: warming up" >&2
sleep 0.3
echo "floor: measuring" >&2
sleep 0.5
echo "floor: measured" >&2
tr -d '\n' < "%s"; echo
"""


class SessionTests(unittest.TestCase):
    """The floor's JVMs kept across the parts that take turns (lab.measure.floor.Session), with a fake java."""

    def setUp(self):
        self.folder = tempfile.mkdtemp(prefix="lab-floor-test-")
        self.window = Window("grpc_unary", in_flight=40)

    def tearDown(self):
        shutil.rmtree(self.folder, ignore_errors=True)

    def jvm(self, client_body):
        path = os.path.join(self.folder, "fake-java")
        with open(path, "w") as handle:
            handle.write(FAKE_JAVA % textwrap.dedent(client_body))
        os.chmod(path, os.stat(path).st_mode | stat.S_IEXEC)
        return floor.Jvm("floor.jar", path, LAB_JAVA_OPTS)

    def parts(self, client_body, count=1, duration_s=2.0):
        """count parts of the window on one session; the records of run_part. The session stops its JVMs itself."""
        with Processes() as processes:
            session = floor.Session(os.path.join(self.folder, "floor"), self.jvm(client_body), processes)
            try:
                records = [floor.run_part(session, self.window, duration_s) for _ in range(count)]
            finally:
                session.close()
            self.assertFalse(self.server_alive(), "the floor's server outlived its session")
            return records

    def server_alive(self):
        try:
            with open(os.path.join(self.folder, "server.pid")) as handle:
                pid = int(handle.read())
            with open("/proc/%d/stat" % pid) as handle:
                return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
        except (OSError, ValueError):
            return False

    def calls(self):
        with open(os.path.join(self.folder, "calls.txt")) as handle:
            return handle.read().splitlines()

    def test_parts_run_on_one_server_and_one_client_each_with_the_servers_cpu_over_its_window(self):
        fixture = os.path.join(FLOOR_C5_N50, "grpc_unary_i40", "client.json")

        records = self.parts(GOOD_CLIENT % fixture, count=2)

        run = '["grpc_unary", "--target", "127.0.0.1:4242", "--in-flight", "40", "--warmup", "0.5", "--duration", "2"]'
        self.assertEqual(self.calls(), ["server grpc --host 127.0.0.1 --port 0", "session", run, run])
        with open(fixture) as handle:
            expected = json.load(handle)
        for record in records:
            self.assertNotIn("error", record)
            self.assertEqual(record["calls_per_second"], expected["calls_per_second"])
            self.assertEqual(record["settings"], expected["settings"])
            # The fake server spins through the 0.5 s between the marks: its CPU is read from /proc, not copied.
            self.assertNotEqual(record["server_cpu_seconds"], expected["server_cpu_seconds"])
            self.assertGreater(record["server_cpu_seconds"], 0)
            self.assertLess(record["server_cpu_seconds"], 1.5)
            self.assertEqual(record["folder"], "floor")
        with open(os.path.join(self.folder, "floor", "client.log")) as handle:
            self.assertEqual(handle.read(), "floor: warming up\nfloor: measuring\nfloor: measured\n" * 2)
        self.assertTrue(os.path.exists(os.path.join(self.folder, "floor", "server-grpc.log")))

    def test_a_run_that_fails_is_an_error_and_the_next_runs_on_the_same_client(self):
        fixture = os.path.join(FLOOR_C5_N50, "grpc_unary_i40", "client.json")
        first_fails = (
            r"""
if [[ ! -e "$(dirname "$0")/failed" ]]; then
  touch "$(dirname "$0")/failed"
  echo "floor: FAILED: no answer within 30000 ms of starting" >&2
  echo '{"error": "no answer within 30000 ms of starting"}'
  continue
fi
"""
            + GOOD_CLIENT % fixture
        )

        failed, good = self.parts(first_fails, count=2)

        self.assertEqual(failed["error"], "the grpc_unary client failed: no answer within 30000 ms of starting")
        self.assertNotIn("error", good)
        self.assertEqual(1, self.calls().count("session"))

    def test_a_client_that_exits_is_an_error_naming_the_first_error_in_its_output(self):
        oom = os.path.join(FIXTURES, "floor", "grpc-stream-s100-oom.txt")

        (record,) = self.parts('cat "%s" >&2; exit 1' % oom)

        # The client's own verdict comes first; without one, the first error named.
        self.assertEqual(
            record["error"],
            "the floor's client exited (exit code 1): floor: FAILED: no answer within 30000 ms of starting "
            "(floor/client.log)",
        )
        without_verdict = os.path.join(self.folder, "oom.txt")
        with open(oom) as source, open(without_verdict, "w") as target:
            target.writelines(line for line in source if "FAILED" not in line)
        self.assertEqual(
            floor.why_failed(without_verdict),
            "Exception: java.lang.OutOfMemoryError thrown from the "
            "UncaughtExceptionHandler in thread "
            '"grpc-default-executor-73"',
        )

    def test_a_result_for_another_window_is_an_error(self):
        (record,) = self.parts(GOOD_CLIENT % os.path.join(FLOOR_C5_N50, "grpc_stream_s5_m50", "client.json"))

        self.assertEqual(record["error"], "the floor ran with in_flight=None, the aggregator's window is 40")

    def test_a_client_that_never_marks_its_window_is_an_error(self):
        (record,) = self.parts('echo "{}"')

        self.assertEqual(record["error"], "the grpc_unary client did not mark its measured window")

    def test_a_hung_client_is_stopped_at_its_limit(self):
        original = floor.CLIENT_ALLOWANCE_S
        floor.CLIENT_ALLOWANCE_S = 1.0
        try:
            started = time.monotonic()
            (record,) = self.parts("sleep 600")
        finally:
            floor.CLIENT_ALLOWANCE_S = original

        # 0.5 s of ramp + 2 s measured + the 1 s allowance, then TERM.
        self.assertLess(time.monotonic() - started, 15)
        self.assertEqual(
            record["error"],
            "the floor's client had not finished a grpc_unary run after 4 s (its warm-up, its measured window and "
            "1 s more) and was stopped; its log: floor/client.log",
        )

    def test_a_server_that_exits_before_listening_is_an_error(self):
        path = os.path.join(self.folder, "fake-java")
        with open(path, "w") as handle:
            handle.write("#!/usr/bin/env bash\necho 'no port for you' >&2\nexit 3\n")
        os.chmod(path, 0o755)
        with Processes() as processes:
            session = floor.Session(os.path.join(self.folder, "floor"), floor.Jvm("floor.jar", path, ""), processes)
            record = floor.run_part(session, self.window, 2.0)
            session.close()

        self.assertEqual(record["error"], "the floor's server exited before listening: no port for you")

    def test_the_warm_up_follows_the_paths_rule_and_says_when_the_jit_was_not_watched(self):
        fixture = os.path.join(FLOOR_C5_N50, "grpc_unary_i40", "client.json")
        said = []
        with Processes() as processes:
            session = floor.Session(os.path.join(self.folder, "floor"), self.jvm(GOOD_CLIENT % fixture), processes)
            try:
                record = floor.warm(session, self.window, 1.0, said.append)
            finally:
                session.close()

        # A fake java keeps no performance counters: one stretch of the warm-up, the JIT not watched.
        self.assertIsNone(record["jit_settled"])
        self.assertEqual(1, sum('"--duration", "1"' in call for call in self.calls()))
        self.assertRegex(said[-1], r"^  warm after \d+s, the JIT not watched$")


class AddUpTests(unittest.TestCase):
    def test_a_repeats_parts_are_one_record(self):
        with open(os.path.join(FLOOR_C5_N50, "grpc_unary_i40", "client.json")) as handle:
            part = json.load(handle)
        part["machine_cpu"] = {"machine_percent": 150.0, "steal_percent": 0.0, "other_percent": 10.0}
        other = dict(
            part,
            calls=part["calls"] * 3,
            seconds=2.0,
            latency_us=dict(part["latency_us"], p50=1000.0, max=999999.0),
            machine_cpu={"machine_percent": 190.0, "steal_percent": 2.0, "other_percent": 30.0},
        )

        whole = floor.add_up([part, other])

        self.assertEqual(4 * part["calls"], whole["calls"])
        self.assertEqual(4.02, whole["seconds"])
        self.assertEqual(round(4 * part["calls"] / 4.02, 3), whole["calls_per_second"])
        self.assertEqual(round((part["latency_us"]["p50"] + 3 * 1000.0) / 4, 3), whole["latency_us"]["p50"])
        self.assertEqual(999999.0, whole["latency_us"]["max"])
        self.assertEqual(2 * part["client_cpu_seconds"], whole["client_cpu_seconds"])
        self.assertEqual(round((150 * 2.02 + 190 * 2.0) / 4.02, 1), whole["machine_cpu"]["machine_percent"])
        self.assertEqual(2, whole["parts"])
        failed = {"transport": "grpc_unary", "error": "the grpc_unary client failed"}
        self.assertIs(failed, floor.add_up([part, failed]))


class AttachTests(unittest.TestCase):
    def test_each_path_gets_its_downstream_calls_per_second_against_its_floor(self):
        data = sample_with_floor()
        grpc_unary = next(run for run in data["runs"] if run["path"] == "grpc/unary")

        self.assertEqual(
            grpc_unary["floor"],
            {
                "transport": "grpc_unary",
                "window": {"in_flight": 40},
                "goal": 0.6,
                "floor_calls_per_second": 35622.42,
                # 676.51 req/s x 50 calls.
                "path_calls_per_second": 33825.5,
                "fraction": round(33825.5 / 35622.42, 4),
                "met": True,
                # The aggregator's and the square service's µs per call, together.
                "path_cpu_us_per_call": round(
                    grpc_unary["cpu"]["aggregator-service"]["us_per_call"]
                    + grpc_unary["cpu"]["square-grpc-service"]["us_per_call"],
                    2,
                ),
                # (client 1.17 s + server 0.86 s) / (20 x 3597 calls).
                "floor_cpu_us_per_call": 28.22,
                "floor_load_average_1m": 4.57,
            },
        )
        self.assertEqual([r["transport"] for r in data["floor"]["runs"]], ["rest_unary", "grpc_unary", "grpc_stream"])
        self.assertEqual(data["floor"]["aggregator"], {"in_flight": 8, "rest_max_connections": 64, "rest_replicas": 1})

    def test_below_the_goal_is_not_met(self):
        data = sample_with_floor()
        run = data["runs"][0]
        run["rps"] = 0.5 * 136571.22 / 50

        floors.attach(data, data["floor"]["runs"])

        self.assertEqual((run["floor"]["fraction"], run["floor"]["met"]), (0.5, False))

    def test_a_failed_floor_leaves_its_paths_an_error_instead_of_a_fraction(self):
        data = sample_with_floor()
        records = data["floor"]["runs"]
        records[2] = {
            "transport": "grpc_stream",
            "window": records[2]["window"],
            "folder": records[2]["folder"],
            "error": "the grpc_stream client failed (exit status 1)",
        }

        floors.attach(data, records)

        self.assertEqual(data["runs"][2]["floor"]["error"], "no floor: the grpc_stream client failed (exit status 1)")
        self.assertIsNone(data["runs"][2]["floor"]["met"])
        self.assertNotIn("fraction", data["runs"][2]["floor"])
        self.assertIn(
            "floor grpc_stream, 5 streams × 50 messages: the grpc_stream client failed (exit status 1)",
            check_results.floor_check(data),
        )

    def test_a_path_run_that_failed_and_the_baseline_get_no_floor(self):
        data = sample_results(concurrency=(5,), n_values=(50,))
        data["runs"][1] = {"path": "grpc/unary", "n": 50, "concurrency": 5, "requests": 1000, "error": "ab exited"}
        data["runs"].append(dict(data["runs"][0], path="rest/square"))
        data["settings"]["paths"].append("rest/square")

        floors.attach(data, [])

        self.assertEqual(["floor" in run for run in data["runs"]], [True, False, True, False])


class TlsFloorTests(unittest.TestCase):
    """Under TLS each mode has its own floor: the same windows over TLS, each TLS stack compared with its mode's."""

    def test_each_tls_mode_plans_the_same_windows_over_tls(self):
        asked = dict(settings("rest/unary grpc/stream rest/square", n=(50,), concurrency=(5,)), tls=["off", "mtls"])

        planned, by_combination = windows.plan(asked)

        self.assertEqual(
            [w.slug() for w in planned],
            ["rest_unary_c40", "grpc_stream_s5_m50", "rest_unary_c40_mtls", "grpc_stream_s5_m50_mtls"],
        )
        self.assertEqual(planned[2].describe(), "40 connections · mTLS")
        self.assertEqual(planned[2].as_dict(), {"connections": 40, "tls": "mtls"})
        self.assertEqual(Window.from_record("rest_unary", planned[2].as_dict()), planned[2])
        self.assertEqual(by_combination[("rest/unary", 50, 5, "mtls")], planned[2])
        self.assertEqual(by_combination[("rest/unary", 50, 5, None)], planned[0])
        self.assertNotIn(("rest/square", 50, 5, "mtls"), by_combination)

    def test_a_tls_stacks_run_is_compared_with_its_modes_floor(self):
        data = sample_with_floor()
        data["settings"]["tls"] = ["off", "mtls"]
        data["settings"]["stacks"] = [{"label": "netty", "tls": "off"}, {"label": "netty · mTLS", "tls": "mtls"}]
        plaintext_run = data["runs"][0]
        plaintext_run["stack"] = "netty"
        encrypted_run = dict(plaintext_run, stack="netty · mTLS", rps=plaintext_run["rps"] / 2)
        data["runs"].append(encrypted_run)
        plaintext_floor = data["floor"]["runs"][0]
        encrypted_floor = dict(
            plaintext_floor,
            window=dict(plaintext_floor["window"], tls="mtls"),
            calls_per_second=plaintext_floor["calls_per_second"] / 3,
        )

        floors.attach(data, data["floor"]["runs"] + [encrypted_floor])

        self.assertEqual(plaintext_run["floor"]["window"], plaintext_floor["window"])
        self.assertEqual(encrypted_run["floor"]["window"], dict(plaintext_floor["window"], tls="mtls"))
        # Half the plaintext path's rate against a third of the plaintext floor's: 1.5 times the fraction.
        self.assertAlmostEqual(encrypted_run["floor"]["fraction"], 1.5 * plaintext_run["floor"]["fraction"], places=3)

    def test_results_from_before_the_floor_ran_under_tls_check_as_they_were_made(self):
        data = sample_with_floor()
        data["settings"]["tls"] = ["off", "mtls"]
        data["settings"]["stacks"] = [{"label": "netty", "tls": "off"}, {"label": "netty · mTLS", "tls": "mtls"}]
        for run in data["runs"]:
            run["stack"] = "netty"
        data["runs"].append(dict(data["runs"][0], stack="netty · mTLS"))
        self.assertEqual(check_results.floor_check(data), [])

        # Once any window is a TLS one, every mode's windows are due.
        data["floor"]["runs"].append(dict(data["floor"]["runs"][0], window={"connections": 5, "tls": "mtls"}))

        self.assertIn("no floor run for grpc_unary, 40 calls in flight · mTLS", check_results.floor_check(data))

    def test_a_tls_window_passes_the_runs_certificates_and_the_providers_switch(self):
        encryption = floor.Encryption(tls.Certificates("/run/certs"), provider="jdk")

        self.assertEqual(
            encryption.server_arguments("mtls"),
            [
                "--tls-cert",
                "/run/certs/server.pem",
                "--tls-key",
                "/run/certs/server.key",
                "--tls-client-ca",
                "/run/certs/ca.pem",
            ],
        )
        self.assertEqual(encryption.client_arguments("on"), ["--tls-ca", "/run/certs/ca.pem"])
        self.assertEqual(
            encryption.jvm(floor.Jvm("floor.jar", "java", "-Xmx256m")).java_opts,
            "-Xmx256m -Dio.grpc.netty.shaded.io.netty.handler.ssl.noOpenSsl=true -Dio.netty.handler.ssl.noOpenSsl=true",
        )
        self.assertEqual(floor.Encryption(None).jvm(floor.Jvm("floor.jar", "java", "-Xmx256m")).java_opts, "-Xmx256m")
        with self.assertRaisesRegex(FloorError, "over mTLS without the run's certificates"):
            floor.Encryption(None).server_arguments("mtls")

    def test_a_tls_window_must_say_it_was_encrypted_as_asked(self):
        window = Window("grpc_unary", in_flight=8, tls="mtls")
        record = {
            "tls": {
                "mode": "mtls",
                "server_provider": "OpenSSL (BoringSSL)",
                "client_provider": "OpenSSL (BoringSSL)",
                "protocol": "TLSv1.3",
                "cipher": "TLS_AES_128_GCM_SHA256",
                "alpn": "h2",
            }
        }

        self.assertEqual(check_results._floor_tls_problems(window, record, {"tls_provider": "openssl"}), [])
        self.assertEqual(
            check_results._floor_tls_problems(window, record, {"tls_provider": "jdk"}),
            [
                "server provider is OpenSSL (BoringSSL), TLS_PROVIDER asked for JDK",
                "client provider is OpenSSL (BoringSSL), TLS_PROVIDER asked for JDK",
            ],
        )
        self.assertEqual(check_results._floor_tls_problems(window, {}, {}), ["no TLS record, but the window is mTLS"])
        self.assertEqual(
            check_results._floor_tls_problems(Window("grpc_unary", in_flight=8), record, {}),
            ["ran over TLS, but the window is plaintext"],
        )


if __name__ == "__main__":
    unittest.main()
