"""The transport floor: the aggregator's window in each combination, the runs of run-floor.sh (real outputs in
fixtures/floor/, and small scripts that fail or hang as a broken floor would), and each path's fraction."""

import contextlib
import io
import os
import re
import shutil
import signal
import stat
import tempfile
import textwrap
import time
import unittest

from lab import check_results, floor, results
from lab.__main__ import main as lab_main
from lab.floor import Window
from lab.settings import Settings, SettingsError
from tests.support import FIXTURES, FLOOR_C5_N50, LAB_JAVA_OPTS, sample_results, sample_with_floor

DEFAULTS = floor.aggregator_options("")
REPO = os.path.join(os.path.dirname(FIXTURES), "..", "..")


def settings(paths="rest/unary grpc/unary grpc/stream", n=(1000,), concurrency=(100,), aggregator_args=""):
    return {"paths": paths.split(), "n": list(n), "concurrency": list(concurrency), "aggregator_args": aggregator_args}


class AggregatorOptionsTests(unittest.TestCase):

    def test_without_arguments_the_aggregators_defaults(self):
        # A literal on purpose: the aggregator's defaults as its application.yml has them (the test below holds the
        # two together), so that a change of the default shows up here and in the windows that follow from it.
        self.assertEqual(DEFAULTS, {"in_flight": 8, "rest_max_connections": 64})
        self.assertEqual(floor.aggregator_options("--aggregator.deadline=120s"), DEFAULTS)

    def test_the_defaults_are_the_aggregators_own(self):
        # The lab cannot ask the aggregator before it runs, so its defaults are copies: of aggregator.in-flight and
        # aggregator.rest.max-connections in the aggregator's application.yml.
        with open(os.path.join(REPO, "aggregator-service", "src", "main", "resources", "application.yml")) as handle:
            yml = handle.read()
        aggregator = re.search(r"^aggregator:\n((?:(?: .*)?\n)*)", yml, re.MULTILINE).group(1)

        self.assertEqual(int(re.search(r"^  in-flight: *(\d+)$", aggregator, re.MULTILINE).group(1)),
                         floor.DEFAULT_IN_FLIGHT)
        self.assertEqual(int(re.search(r"^  rest:\n(?:    .*\n)*?    max-connections: *(\d+)$", aggregator,
                                       re.MULTILINE).group(1)), floor.DEFAULT_MAX_CONNECTIONS)

    def test_aggregator_args_override_them(self):
        options = floor.aggregator_options("--aggregator.deadline=120s --aggregator.in-flight=8 "
                                           "--aggregator.rest.max-connections=128")

        self.assertEqual(options, {"in_flight": 8, "rest_max_connections": 128})

    def test_springs_relaxed_names_count_and_the_last_argument_wins(self):
        self.assertEqual(floor.aggregator_options("--aggregator.inFlight=4 --aggregator.rest.max_connections=16"),
                         {"in_flight": 4, "rest_max_connections": 16})
        self.assertEqual(floor.aggregator_options("--aggregator.in-flight=4 --aggregator.in-flight=1")["in_flight"], 1)

    def test_other_settings_and_non_option_arguments_do_not(self):
        self.assertEqual(floor.aggregator_options("aggregator.in-flight=4 --aggregator.in-flight-limit=2 "
                                                  "--aggregator.rest.max-connections"), DEFAULTS)

    def test_a_value_spring_would_refuse_is_refused(self):
        for args in ("--aggregator.in-flight=many", "--aggregator.rest.max-connections=0"):
            with self.subTest(args=args), self.assertRaisesRegex(floor.FloorError, args.split("=")[0]):
                floor.aggregator_options(args)

    def test_the_in_flight_the_aggregator_logs_at_start_up(self):
        # The aggregator's own start-up line (StartupLog), from a real lab run's logs/aggregator-service.log, of an
        # aggregator from before its default in-flight went from 32 to 8.
        with open(os.path.join(FIXTURES, "floor", "aggregator-startup.txt")) as handle:
            line = handle.read()

        self.assertEqual(floor.logged_in_flight("starting\n" + line), 32)
        self.assertEqual(floor.logged_in_flight(line.replace("; 32 calls", "; 8 calls")), 8)
        self.assertIsNone(floor.logged_in_flight("starting\n"))


class WindowTests(unittest.TestCase):

    def test_the_default_load_is_the_floors_default_window(self):
        # ab -c 100 against /path/1000: 100 requests x 8 calls in flight, the pool's 64 connections, 100 streams.
        self.assertEqual(floor.window_for("grpc/unary", 1000, 100, DEFAULTS), Window("grpc-unary", in_flight=800))
        self.assertEqual(floor.window_for("rest/unary", 1000, 100, DEFAULTS), Window("http", connections=64))
        self.assertEqual(floor.window_for("grpc/stream", 1000, 100, DEFAULTS),
                         Window("grpc-stream", streams=100, messages_per_stream=1000))

    def test_overrides_change_the_unary_windows_only(self):
        options = floor.aggregator_options("--aggregator.in-flight=32 --aggregator.rest.max-connections=128")

        self.assertEqual(floor.window_for("grpc/unary", 1000, 100, options).in_flight, 3200)
        self.assertEqual(floor.window_for("rest/unary", 1000, 100, options).connections, 128)
        self.assertEqual(floor.window_for("grpc/stream", 1000, 100, options),
                         Window("grpc-stream", streams=100, messages_per_stream=1000))

    def test_the_articles_sequential_loop_has_one_call_per_request(self):
        options = floor.aggregator_options("--aggregator.in-flight=1")

        self.assertEqual(floor.window_for("grpc/unary", 1000, 100, options).in_flight, 100)
        self.assertEqual(floor.window_for("rest/unary", 1000, 100, options).connections, 64)

    def test_a_request_never_has_more_calls_in_flight_than_its_n(self):
        # n=5 is below the default in-flight of 8: 5 calls per request, not 8.
        self.assertEqual(floor.window_for("grpc/unary", 5, 8, DEFAULTS).in_flight, 40)
        self.assertEqual(floor.window_for("rest/unary", 5, 20, DEFAULTS).connections, 64)
        self.assertEqual(floor.window_for("rest/unary", 5, 1, DEFAULTS).connections, 5)
        self.assertEqual(floor.window_for("rest/unary", 1000, 1, DEFAULTS).connections, 8)

    def test_the_baseline_and_n_zero_have_no_floor(self):
        self.assertIsNone(floor.window_for("rest/square", 1000, 100, DEFAULTS))
        self.assertIsNone(floor.window_for("grpc/stream", 0, 100, DEFAULTS))

    def test_a_sweep_runs_each_distinct_window_once_in_the_order_of_the_paths(self):
        windows, by_combination = floor.plan(settings("rest/unary grpc/unary grpc/stream rest/square", n=(5, 100),
                                                      concurrency=(1, 16)))

        self.assertEqual([w.slug() for w in windows], [
            "http_c5", "http_c64", "http_c8",
            "grpc-unary_i5", "grpc-unary_i80", "grpc-unary_i8", "grpc-unary_i128",
            "grpc-stream_s1_m5", "grpc-stream_s16_m5", "grpc-stream_s1_m100", "grpc-stream_s16_m100"])
        # 64 connections serve both n=5 c=16 and n=100 c=16.
        self.assertEqual(by_combination[("rest/unary", 5, 16)], by_combination[("rest/unary", 100, 16)])
        self.assertEqual(len(by_combination), 12)
        self.assertNotIn(("rest/square", 5, 1), by_combination)

    def test_the_plan_follows_the_recorded_aggregator_arguments(self):
        windows, _ = floor.plan(settings(aggregator_args="--aggregator.deadline=120s --aggregator.in-flight=64"))

        self.assertEqual([w.slug() for w in windows], ["http_c64", "grpc-unary_i6400", "grpc-stream_s100_m1000"])

    def test_each_window_sets_exactly_its_floor_knobs(self):
        self.assertEqual(Window("http", connections=64).env(),
                         {"FLOOR_TRANSPORTS": "http", "FLOOR_IN_FLIGHT": "64", "FLOOR_CONNECTIONS": "64"})
        self.assertEqual(Window("grpc-unary", in_flight=3200).env(),
                         {"FLOOR_TRANSPORTS": "grpc-unary", "FLOOR_IN_FLIGHT": "3200"})
        self.assertEqual(Window("grpc-stream", streams=100, messages_per_stream=1000).env(),
                         {"FLOOR_TRANSPORTS": "grpc-stream", "FLOOR_STREAMS": "100", "FLOOR_MESSAGES": "1000"})

    def test_the_script_gets_the_labs_jvm_and_durations_but_not_stray_window_knobs(self):
        env = floor.script_env(Window("grpc-unary", in_flight=160),
                               {"PATH": "/usr/bin", "FLOOR_DURATION": "2s", "FLOOR_WARMUP": "1s", "FLOOR_STREAMS": "7",
                                "FLOOR_IN_FLIGHT": "9", "JAVA_OPTS": "-Xmx4g"},
                               "/jar", "/jdk/bin/java", LAB_JAVA_OPTS)

        self.assertEqual(env, {"PATH": "/usr/bin", "FLOOR_DURATION": "2s", "FLOOR_WARMUP": "1s",
                               "FLOOR_TRANSPORTS": "grpc-unary", "FLOOR_IN_FLIGHT": "160", "FLOOR_JAR": "/jar",
                               "JAVA": "/jdk/bin/java", "JAVA_OPTS": LAB_JAVA_OPTS})

    def test_a_floor_run_must_report_the_window_it_was_given(self):
        self.assertEqual(Window("grpc-unary", in_flight=160).check({"in_flight": 160, "channels": 1}), ([], []))
        self.assertEqual(Window("http", connections=32).check({"in_flight": 64, "connections": 64})[0],
                         ["the floor ran with connections=64, the aggregator's window is 32"])
        problems, notes = Window("grpc-stream", streams=5, messages_per_stream=50).check({"streams": 5})
        self.assertEqual(problems, [])
        self.assertIn("messages per stream not compared", notes[0])
        self.assertEqual(Window("grpc-stream", streams=5, messages_per_stream=50).check(
            {"streams": 5, "messages_per_stream": 1000})[0],
            ["the floor ran with messages_per_stream=1000, the aggregator's window is 50"])


class KnobTests(unittest.TestCase):

    def test_durations_as_transport_floor_reads_them(self):
        self.assertEqual([floor.parse_duration(text, "X") for text in ("500ms", "3s", "1.5s", "1m", "2")],
                         [0.5, 3.0, 1.5, 60.0, 2.0])
        with self.assertRaisesRegex(ValueError, "FLOOR_DURATION must be a duration"):
            floor.parse_duration("10 seconds", "FLOOR_DURATION")

    def test_the_floor_is_on_by_default_and_its_knobs_are_checked_before_anything_runs(self):
        self.assertTrue(Settings.from_env({}).floor)
        self.assertFalse(Settings.from_env({"FLOOR": "0"}).floor)
        self.assertEqual(Settings.from_env({"FLOOR_DURATION": "2s", "FLOOR_WARMUP": "0s"}).floor_warmup, "0s")
        for env, message in (({"FLOOR": "yes"}, "FLOOR must be 0 or 1"), ({"FLOOR_DURATION": "0s"}, "longer than 0"),
                             ({"FLOOR_WARMUP": "soon"}, "FLOOR_WARMUP must be a duration")):
            with self.subTest(env=env), self.assertRaisesRegex(SettingsError, message):
                Settings.from_env(env)

    def test_the_time_limit_covers_the_floors_own_timeouts_and_its_durations(self):
        short = floor.time_limit_s({"FLOOR_DURATION": "2s", "FLOOR_WARMUP": "1s"})
        default = floor.time_limit_s({})

        self.assertEqual(short, floor.FIXED_ALLOWANCE_S + floor.SLACK_S + 60 + 3)
        self.assertEqual(default - short, 20 - 3)
        self.assertEqual(floor.time_limit_s({"FLOOR_DURATION": "1m", "FLOOR_START_TIMEOUT": "120"}) - default, 50 + 60)


def script(folder, body):
    """An executable bash script standing in for run-floor.sh; it gets the output folder as $1."""
    path = os.path.join(folder, "fake-run-floor.sh")
    with open(path, "w") as handle:
        handle.write("#!/usr/bin/env bash\n" + textwrap.dedent(body))
    os.chmod(path, os.stat(path).st_mode | stat.S_IEXEC)
    return ["bash", path]


def alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def outlives(pid_file, seconds=3.0):
    """True when the process in pid_file still runs after `seconds` (a signal is delivered, not awaited)."""
    with open(pid_file) as handle:
        pid = int(handle.read())
    deadline = time.monotonic() + seconds
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return alive(pid)


class RunTests(unittest.TestCase):

    def setUp(self):
        self.folder = tempfile.mkdtemp(prefix="lab-floor-test-")
        self.env = dict(os.environ, JAVA_OPTS=LAB_JAVA_OPTS)

    def tearDown(self):
        shutil.rmtree(self.folder, ignore_errors=True)

    def out(self, name="grpc-unary_i40"):
        return os.path.join(self.folder, "floor", name)

    def test_a_run_keeps_the_floor_json_run_of_its_transport_with_the_files_settings(self):
        fixture = os.path.join(FLOOR_C5_N50, "grpc-unary_i40", "floor.json")
        command = script(self.folder, 'mkdir -p "$1"; echo run-floor: "$FLOOR_TRANSPORTS $FLOOR_IN_FLIGHT"; '
                                      'cp %s "$1/floor.json"\n' % fixture)

        window = Window("grpc-unary", in_flight=40)

        record = floor.run_window(window, self.out(), command, floor.script_env(window, self.env, "/jar", "java", ""), 30)

        self.assertNotIn("error", record)
        self.assertEqual((record["transport"], record["window"], record["folder"]),
                         ("grpc-unary", {"in_flight": 40}, "floor/grpc-unary_i40"))
        self.assertEqual(record["calls_per_second"], 1781.121)
        self.assertEqual(record["floor_settings"]["java_opts"], LAB_JAVA_OPTS)
        with open(os.path.join(self.out(), "run-floor.log")) as handle:
            self.assertEqual(handle.read(), "run-floor: grpc-unary 40\n")

    def test_a_failed_run_is_an_error_with_the_end_of_its_log(self):
        # The real output of the grpc-stream floor with 100 streams and the lab's 128 MB heap.
        command = script(self.folder, 'cat %s; exit 1\n' % os.path.join(FIXTURES, "floor", "grpc-stream-s100-oom.txt"))

        record = floor.run_window(Window("grpc-stream", streams=100, messages_per_stream=1000),
                                  self.out("grpc-stream_s100_m1000"), command, self.env, 30)

        self.assertEqual(record["error"],
                         "run-floor.sh failed (exit status 1), a floor JVM ran out of memory with JAVA_OPTS="
                         + LAB_JAVA_OPTS + ": floor: FAILED: no answer within 30000 ms of starting"
                         "; run-floor: the grpc-stream client failed (exit status 1)"
                         " (floor/grpc-stream_s100_m1000/run-floor.log)")

    def test_a_failed_runs_error_names_the_first_error_in_its_output_and_the_scripts_verdict(self):
        lines = ["run-floor: grpc-stream: starting a bare grpc server",
                 '  Exception in thread "grpc-default-executor-75" ',
                 '  Exception in thread "grpc-default-executor-12" java.lang.OutOfMemoryError: Java heap space',
                 "  transport-floor: Self-suppression not permitted", "  usage:",
                 "run-floor: the grpc-stream client failed (exit status 2)"]
        log = os.path.join(self.folder, "run-floor.log")
        with open(log, "w") as handle:
            handle.write("\n".join(lines) + "\n")

        self.assertEqual(floor.why_failed(log), "java.lang.OutOfMemoryError: Java heap space; "
                                                "run-floor: the grpc-stream client failed (exit status 2)")
        with open(log, "w") as handle:
            handle.write("run-floor: no jar at /x.jar; build it first\n")
        self.assertEqual(floor.why_failed(log), "run-floor: no jar at /x.jar; build it first")

    def test_a_floor_json_with_another_window_is_an_error(self):
        fixture = os.path.join(FLOOR_C5_N50, "grpc-unary_i40", "floor.json")
        command = script(self.folder, 'mkdir -p "$1"; cp %s "$1/floor.json"\n' % fixture)

        record = floor.run_window(Window("grpc-unary", in_flight=800), self.out(), command, self.env, 30)

        self.assertIn("the floor ran with in_flight=40, the aggregator's window is 800", record["error"])

    def test_a_hung_run_is_stopped_at_the_limit_with_everything_it_started(self):
        pid_file = os.path.join(self.folder, "child.pid")
        # Like run-floor.sh: a background JVM (here a sleep), and a trap that stops it on TERM.
        command = script(self.folder, '''
            sleep 300 & child=$!
            echo $child > %s
            trap 'kill $child; exit 143' TERM
            echo "run-floor: waiting for an answer that never comes"
            wait
            ''' % pid_file)
        started = time.monotonic()

        record = floor.run_window(Window("grpc-unary", in_flight=40), self.out(), command, self.env, 1.5)

        self.assertLess(time.monotonic() - started, 10)
        self.assertIn("did not finish within 2 s and was stopped", record["error"])
        self.assertIn("waiting for an answer that never comes", record["error"])
        self.assertFalse(outlives(pid_file), "the floor's child process outlived the run")

    def test_a_run_that_ignores_term_is_killed_with_its_group(self):
        pid_file = os.path.join(self.folder, "child.pid")
        command = script(self.folder, '''
            trap '' TERM
            sleep 300 & echo $! > %s
            while true; do sleep 0.1; done
            ''' % pid_file)
        grace, floor.STOP_GRACE_S = floor.STOP_GRACE_S, 1
        try:
            status = floor.run_script(command, self.env, os.path.join(self.folder, "log"), 1)
        finally:
            floor.STOP_GRACE_S = grace

        self.assertIsNone(status)
        self.assertFalse(outlives(pid_file))

    def test_the_lab_being_stopped_stops_the_floor_and_then_stops_too(self):
        pid_file = os.path.join(self.folder, "child.pid")
        command = script(self.folder, '''
            sleep 300 & child=$!
            echo $child > %s
            trap 'kill $child; exit 143' TERM
            wait
            ''' % pid_file)

        def stopped(_signum, _frame):
            raise SystemExit(143)   # what the lab's TERM handler does

        previous = signal.signal(signal.SIGALRM, stopped)
        signal.setitimer(signal.ITIMER_REAL, 1.0)
        try:
            with self.assertRaises(SystemExit):
                floor.run_script(command, self.env, os.path.join(self.folder, "log"), 60)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
        self.assertFalse(outlives(pid_file))

    def test_the_real_run_floor_script_refuses_a_missing_jar(self):
        # The real script, so that the lab's reading of its failure is tested against what it really says.
        real = os.path.join(os.path.dirname(FIXTURES), "..", "..", "transport-floor", "run-floor.sh")
        env = floor.script_env(Window("http", connections=64), os.environ, os.path.join(self.folder, "no.jar"),
                               "java", LAB_JAVA_OPTS)

        record = floor.run_window(Window("http", connections=64), self.out("http_c64"), ["bash", real], env, 30)

        self.assertRegex(record["error"], r"^run-floor.sh failed \(exit status 1\): run-floor: no jar at .*/no.jar; "
                                          r"build it first: ./mvnw .* \(floor/http_c64/run-floor.log\)$")


class CommandTests(unittest.TestCase):
    """`python3 -m lab floor DIR`, as run.sh calls it, with a stand-in for run-floor.sh that writes the real
    floor.json of fixtures/floor/c5-n50 for the window it is given (or fails, for one transport)."""

    def setUp(self):
        self.folder = tempfile.mkdtemp(prefix="lab-floor-command-")
        data = sample_results(concurrency=(5,), n_values=(50,))
        data["settings"].update(java_opts=LAB_JAVA_OPTS, aggregator_args="--aggregator.deadline=120s", floor=True)
        results.write_json(self.folder, data)
        self.ran = os.path.join(self.folder, "ran")

    def tearDown(self):
        shutil.rmtree(self.folder, ignore_errors=True)

    def command(self, failing_transport="none"):
        fake = script(self.folder, """
            echo "$FLOOR_TRANSPORTS" >> %s
            if [[ $FLOOR_TRANSPORTS == %s ]]; then echo "run-floor: the $FLOOR_TRANSPORTS client failed"; exit 1; fi
            mkdir -p "$1" && cp "%s/$(basename "$1")/floor.json" "$1/floor.json"
            """ % (self.ran, failing_transport, FLOOR_C5_N50))[1]
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = lab_main(["floor", self.folder, "--script", fake, "--jar", "/jar", "--java-opts", LAB_JAVA_OPTS])
        return status, out.getvalue(), err.getvalue()

    def test_it_runs_each_window_once_and_adds_the_floor_to_the_results_and_the_summary(self):
        status, out, _ = self.command()

        self.assertEqual(status, 0)
        with open(self.ran) as handle:
            self.assertEqual(handle.read().split(), ["http", "grpc-unary", "grpc-stream"])
        data = results.read_json(self.folder)
        self.assertEqual([record["folder"] for record in data["floor"]["runs"]],
                         ["floor/http_c40", "floor/grpc-unary_i40", "floor/grpc-stream_s5_m50"])
        self.assertEqual(data["floor"]["java_opts"], LAB_JAVA_OPTS)
        self.assertEqual(check_results.problems(data), [])
        with open(os.path.join(self.folder, "summary.md")) as handle:
            self.assertIn("| grpc/unary | 50 | 5 | 33826 | grpc-unary, 40 calls in flight | 1781 |", handle.read())
        self.assertIn("[lab] floor 2/3: grpc-unary, 40 calls in flight (log: floor/grpc-unary_i40/run-floor.log)", out)
        self.assertIn("Transport floor (each path's downstream calls/s against its bare transport's", out)

    def test_a_failed_floor_run_fails_it_after_the_results_have_the_others(self):
        status, _, err = self.command(failing_transport="grpc-stream")

        self.assertEqual(status, 1)
        self.assertIn("1 of 3 floor runs failed", err)
        data = results.read_json(self.folder)
        self.assertEqual(data["floor"]["runs"][2]["error"],
                         "run-floor.sh failed (exit status 1): run-floor: the grpc-stream client failed "
                         "(floor/grpc-stream_s5_m50/run-floor.log)")
        self.assertIn("fraction", data["runs"][1]["floor"])
        self.assertEqual(check_results.problems(data), [
            "floor grpc-stream, 5 streams × 50 messages: " + data["floor"]["runs"][2]["error"]])

    def test_an_aggregator_that_says_it_used_another_in_flight_stops_it_before_any_run(self):
        # An aggregator jar from before the default went to 8 logs 32; no argument says so, so the lab takes 8.
        os.makedirs(os.path.join(self.folder, "logs"))
        shutil.copy(os.path.join(FIXTURES, "floor", "aggregator-startup.txt"),
                    os.path.join(self.folder, "logs", "aggregator-service.log"))

        status, _, err = self.command()

        self.assertEqual(status, 1)
        self.assertIn("the aggregator's log says it kept 32 calls in flight per request, but its arguments "
                      "(AGGREGATOR_ARGS) give 8", err)
        self.assertFalse(os.path.exists(self.ran))
        self.assertNotIn("floor", results.read_json(self.folder))


class AttachTests(unittest.TestCase):

    def test_each_path_gets_its_downstream_calls_per_second_against_its_floor(self):
        data = sample_with_floor()
        grpc_unary = next(run for run in data["runs"] if run["path"] == "grpc/unary")

        self.assertEqual(grpc_unary["floor"], {
            "transport": "grpc-unary", "window": {"in_flight": 40}, "goal": 0.6,
            "floor_calls_per_second": 1781.121,
            # 676.51 req/s x 50 calls.
            "path_calls_per_second": 33825.5,
            "fraction": round(33825.5 / 1781.121, 4), "met": True,
            # The aggregator's and the square service's µs per call, together.
            "path_cpu_us_per_call": round(grpc_unary["cpu"]["aggregator-service"]["us_per_call"]
                                          + grpc_unary["cpu"]["square-grpc-service"]["us_per_call"], 2),
            # (client 1.17 s + server 0.86 s) / 3597 calls.
            "floor_cpu_us_per_call": 564.36, "floor_load_average_1m": 4.57})
        self.assertEqual([r["transport"] for r in data["floor"]["runs"]], ["http", "grpc-unary", "grpc-stream"])
        self.assertEqual(data["floor"]["aggregator"], {"in_flight": 8, "rest_max_connections": 64})

    def test_below_the_goal_is_not_met(self):
        data = sample_with_floor()
        run = data["runs"][0]
        run["rps"] = 0.5 * 6828.561 / 50

        floor.attach(data, data["floor"]["runs"], DEFAULTS)

        self.assertEqual((run["floor"]["fraction"], run["floor"]["met"]), (0.5, False))

    def test_a_failed_floor_leaves_its_paths_an_error_instead_of_a_fraction(self):
        data = sample_with_floor()
        records = data["floor"]["runs"]
        records[2] = {"transport": "grpc-stream", "window": records[2]["window"], "folder": records[2]["folder"],
                      "error": "run-floor.sh failed (exit status 1)"}

        floor.attach(data, records, DEFAULTS)

        self.assertEqual(data["runs"][2]["floor"]["error"], "no floor: run-floor.sh failed (exit status 1)")
        self.assertIsNone(data["runs"][2]["floor"]["met"])
        self.assertNotIn("fraction", data["runs"][2]["floor"])

    def test_a_path_run_that_failed_and_the_baseline_get_no_floor(self):
        data = sample_results(concurrency=(5,), n_values=(50,))
        data["runs"][1] = {"path": "grpc/unary", "n": 50, "concurrency": 5, "requests": 1000, "error": "ab exited"}
        data["runs"].append(dict(data["runs"][0], path="rest/square"))
        data["settings"]["paths"].append("rest/square")

        floor.attach(data, [], DEFAULTS)

        self.assertEqual(["floor" in run for run in data["runs"]], [True, False, True, False])


if __name__ == "__main__":
    unittest.main()
