"""Where the lab puts each service: ports, replicas, the aggregator's arguments, and ports already taken."""

import contextlib
import io
import socket
import tempfile
import unittest

from lab.core.catalogue import AGGREGATOR, SQUARE_GRPC, SQUARE_REST
from lab.core.errors import LabError, ServiceExited
from lab.core.settings import Settings
from lab.experiments import run
from lab.measure import progress
from lab.results import report, results
from lab.stage import deadlines, services

from tests.support import sample_results

ALL = [SQUARE_REST, SQUARE_GRPC, AGGREGATOR]


class LayoutTests(unittest.TestCase):
    def test_one_replica_each_on_the_default_ports(self):
        instances = services.layout(Settings.from_env({}), ALL)

        self.assertEqual(
            [(i.name, i.ports) for i in instances],
            [
                ("square-rest-service", {"SQUARE_REST_PORT": 7575}),
                ("square-grpc-service", {"SQUARE_GRPC_PORT": 6565, "SQUARE_GRPC_ACTUATOR_PORT": 6566}),
                ("aggregator-service", {"AGGREGATOR_PORT": 8080}),
            ],
        )
        self.assertEqual(
            instances[2].arguments,
            [
                "--server.address=127.0.0.1",
                "--server.port=8080",
                "--aggregator.rest.base-url=http://127.0.0.1:7575",
                "--aggregator.grpc.target=127.0.0.1:6565",
                "--aggregator.deadline=120s",
            ],
        )
        self.assertEqual(
            [i.actuator for i in instances],
            ["http://127.0.0.1:7575/actuator", "http://127.0.0.1:6566/actuator", "http://127.0.0.1:8080/actuator"],
        )
        self.assertEqual([i.base_url for i in instances], ["http://127.0.0.1:7575", None, "http://127.0.0.1:8080"])

    def test_replicas_sit_one_rest_port_and_two_grpc_ports_apart_and_the_aggregator_calls_them_all(self):
        instances = services.layout(Settings.from_env({"REPLICAS": "2", "SQUARE_REST_PORT": "17575"}), ALL)

        self.assertEqual(
            [i.name for i in instances],
            [
                "square-rest-service",
                "square-rest-service-2",
                "square-grpc-service",
                "square-grpc-service-2",
                "aggregator-service",
            ],
        )
        self.assertEqual(instances[1].ports, {"SQUARE_REST_PORT+1": 17576})
        self.assertEqual(instances[3].ports, {"SQUARE_GRPC_PORT+2": 6567, "SQUARE_GRPC_ACTUATOR_PORT+2": 6568})
        self.assertIn(
            "--aggregator.rest.base-url=http://127.0.0.1:17575,http://127.0.0.1:17576", instances[4].arguments
        )
        self.assertIn("--aggregator.grpc.target=127.0.0.1:6565,127.0.0.1:6567", instances[4].arguments)

    def test_aggregator_args_come_after_the_labs_and_may_set_the_deadline(self):
        given = Settings.from_env({"AGGREGATOR_ARGS": "--aggregator.in-flight=1"})
        self.assertEqual(
            services.aggregator_arguments(given), ["--aggregator.deadline=120s", "--aggregator.in-flight=1"]
        )
        own = Settings.from_env({"AGGREGATOR_ARGS": "--aggregator.deadline=5s", "AB_TIMEOUT": "30"})
        self.assertEqual(services.aggregator_arguments(own), ["--aggregator.deadline=5s"])

    def test_on_a_network_the_aggregator_calls_each_replica_through_its_proxy_with_the_networks_deadlines(self):
        settings = Settings.from_env({"REPLICAS": "2", "NETWORK": "lan"})
        squares = services.layout(settings, [SQUARE_REST, SQUARE_GRPC])
        routes = services.proxy_routes(settings, squares)
        limits = deadlines.Deadlines(125, 12, 125, "why")

        aggregator = services.aggregator(
            settings, squares, {r.name: "127.0.0.1:%d" % r.listen_port for r in routes}, limits
        )

        self.assertEqual(
            [(r.name, r.knob, r.listen_port, r.upstream) for r in routes],
            [
                ("square-rest-service", "PROXY_PORT", 7700, "127.0.0.1:7575"),
                ("square-rest-service-2", "PROXY_PORT+1", 7701, "127.0.0.1:7576"),
                ("square-grpc-service", "PROXY_PORT+2", 7702, "127.0.0.1:6565"),
                ("square-grpc-service-2", "PROXY_PORT+3", 7703, "127.0.0.1:6567"),
            ],
        )
        self.assertEqual(
            aggregator.arguments[2:],
            [
                "--aggregator.rest.base-url=http://127.0.0.1:7700,http://127.0.0.1:7701",
                "--aggregator.grpc.target=127.0.0.1:7702,127.0.0.1:7703",
                "--aggregator.deadline=125s",
                "--aggregator.call-deadline=12s",
            ],
        )

    def test_aggregator_args_may_set_the_call_deadline_of_every_network(self):
        settings = Settings.from_env({"AGGREGATOR_ARGS": "--aggregator.call-deadline=30s"})

        self.assertEqual(
            services.aggregator_arguments(settings, deadlines.Deadlines(125, 12, 125, "why")),
            ["--aggregator.deadline=125s", "--aggregator.call-deadline=30s"],
        )

    def test_the_baseline_path_starts_the_rest_square_service_alone(self):
        self.assertEqual(
            [i.name for i in services.layout(Settings.from_env({"PATHS": "rest/square"}), [SQUARE_REST])],
            ["square-rest-service"],
        )


class PortTests(unittest.TestCase):
    def test_a_taken_port_is_named_with_the_knob_that_moves_it(self):
        with socket.socket() as holder:
            holder.bind(("127.0.0.1", 0))
            holder.listen()
            port = holder.getsockname()[1]
            settings = Settings.from_env({"REPLICAS": "2", "SQUARE_REST_PORT": str(port - 1)})
            instances = services.layout(settings, [SQUARE_REST])

            with self.assertRaises(LabError) as raised:
                services.check_ports(instances, settings)

        message = str(raised.exception)
        self.assertIn("port %d (SQUARE_REST_PORT+1) is already in use on 127.0.0.1." % port, message)
        self.assertIn(
            "give the lab other ports, e.g. SQUARE_REST_PORT=%d loadtest/run.sh" % (port - 1 + 10000), message
        )

    def test_a_taken_proxy_port_is_named_with_its_knob_and_only_on_a_network_that_needs_one(self):
        with socket.socket() as holder:
            holder.bind(("127.0.0.1", 0))
            holder.listen()
            port = holder.getsockname()[1]
            # Every other port free, so that only the proxy's is taken.
            env = {
                "PROXY_PORT": str(port),
                "SQUARE_REST_PORT": str(_free_port()),
                "SQUARE_GRPC_ACTUATOR_PORT": str(_free_port()),
                "AGGREGATOR_PORT": str(_free_port()),
                "TOXIPROXY_PORT": str(_free_port()),
                "PATHS": "rest/unary",
            }
            settings = Settings.from_env(dict(env, NETWORK="loopback wan"))
            instances = services.layout(settings, [SQUARE_REST, AGGREGATOR])

            with self.assertRaises(LabError) as raised:
                services.check_ports(instances, settings)
            services.check_ports(instances, Settings.from_env(env))

        self.assertIn("port %d (PROXY_PORT) is already in use on 127.0.0.1." % port, str(raised.exception))


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


if __name__ == "__main__":
    unittest.main()


class StoppedTests(unittest.TestCase):
    """A run stopped before its end keeps what it measured and says why first (lab.experiments.run.stopped)."""

    def test_a_signal_ctrl_c_or_the_lab_s_own_error_is_said_in_words_with_its_exit_status(self):
        self.assertEqual((143, "the lab was stopped by SIGTERM"), run.stop_reason(SystemExit(143)))
        self.assertEqual((129, "the lab was stopped by SIGHUP"), run.stop_reason(SystemExit(129)))
        self.assertEqual((130, "the lab was stopped with Ctrl-C (SIGINT)"), run.stop_reason(KeyboardInterrupt()))
        self.assertEqual(
            (1, "the lab stopped: square-grpc-service exited"),
            run.stop_reason(ServiceExited("square-grpc-service exited")),
        )

    def test_the_failure_is_kept_in_results_json_and_said_first(self):
        with tempfile.TemporaryDirectory() as folder:
            results.write_json(folder, sample_results())
            clock = iter([0.0, 0.0, 75.0]).__next__
            tracker = progress.Progress([progress.Step(("measure", "a"), "measuring a")], clock=clock)
            tracker.begin(("measure", "a"))
            with contextlib.redirect_stderr(io.StringIO()) as said:
                self.assertEqual(143, run.stopped(folder, SystemExit(143), tracker))
            what = (
                "the lab was stopped by SIGTERM during measuring a, after 1 min 15 s; what it measured before is "
                "kept, and nothing after it ran"
            )
            self.assertEqual("[lab] ERROR: %s\n" % what, said.getvalue())
            kept = results.read_json(folder)
            self.assertEqual([what], results.failures(kept))
            self.assertEqual(sample_results()["runs"], kept["runs"])
            self.assertTrue(
                report.summary_markdown(kept).startswith(
                    "# REST vs gRPC load-test results\n\n**This run did not finish as it should:**\n\n- " + what
                )
            )

    def test_with_nothing_measured_yet_the_error_is_raised_as_it_is(self):
        with tempfile.TemporaryDirectory() as folder, self.assertRaises(KeyboardInterrupt):
            run.stopped(folder, KeyboardInterrupt(), progress.Progress([]))
