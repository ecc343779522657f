"""A service that dies while the lab measures stops the lab with its name, its exit, the run and its log; the one
wait-until every poll of the lab goes through; the one Java command line of every JVM it starts."""

import os
import signal
import sys
import tempfile
import time
import unittest

from lab.core.errors import LabError, ServiceExited
from lab.host.processes import Processes, Watched, check_alive, exit_text, java_command, wait_until
from lab.measure import bench
from lab.stage.services import Service


class ServiceAliveTests(unittest.TestCase):
    def setUp(self):
        self.folder = tempfile.TemporaryDirectory()
        self.addCleanup(self.folder.cleanup)
        self.processes = Processes()
        self.addCleanup(self.processes.stop_all)

    def start(self, name, code):
        log = os.path.join(self.folder.name, name + ".log")
        child = self.processes.start([sys.executable, "-c", code], log_path=log)
        return Watched(name, child, log)

    def test_a_service_that_exited_is_named_with_its_exit_code_the_run_and_its_logs_last_lines(self):
        running = self.start("square-rest-service", "import time; time.sleep(60)")
        dead = self.start(
            "aggregator-service",
            "print('started'); print('Terminating due to "
            "java.lang.OutOfMemoryError: Java heap space'); raise SystemExit(3)",
        )
        dead.child.wait(timeout=30)

        with self.assertRaises(ServiceExited) as caught:
            check_alive([running, dead], "the measured run of rest/unary n=5 c=2, payload small, network loopback")

        self.assertIsInstance(caught.exception, LabError)
        self.assertEqual(
            str(caught.exception),
            "aggregator-service exited (exit code 3) during the measured run of rest/unary n=5 c=2, "
            "payload small, network loopback, so the lab stops here: what it measured so far is kept.\n"
            "[lab] its log: %s\n[lab] the log's last lines:\n  started\n"
            "  Terminating due to java.lang.OutOfMemoryError: Java heap space" % dead.log_path,
        )

    def test_a_service_killed_by_a_signal_says_which(self):
        killed = self.start("square-grpc-service", "import time; time.sleep(60)")
        os.kill(killed.child.pid, signal.SIGKILL)
        killed.child.wait(timeout=30)

        with self.assertRaises(ServiceExited) as caught:
            check_alive([killed], "the warm-up of grpc/unary n=1 c=1, payload small, network loopback")

        self.assertIn(
            "square-grpc-service exited (killed by SIGKILL) during the warm-up of grpc/unary", str(caught.exception)
        )
        self.assertIn("[lab] the log's last lines:\n  (empty)", str(caught.exception))

    def test_services_still_running_pass(self):
        running = self.start("square-rest-service", "import time; time.sleep(60)")

        check_alive([running], "a run")

        self.assertIsNone(running.child.poll())

    def test_a_service_group_is_checked_through_every_replica(self):
        alive = self.start("square-grpc-service", "import time; time.sleep(60)")
        dead = self.start("square-grpc-service-2", "raise SystemExit(1)")
        dead.child.wait(timeout=30)
        service = Service("square-grpc-service", [alive.child.pid, dead.child.pid], None, watched=[alive, dead])

        with self.assertRaises(ServiceExited) as caught:
            bench.ensure_alive(
                [service],
                "the measured run of "
                + bench.run_text(
                    "grpc/unary", 5, 2, conditions=bench.Conditions(stack_label="netty · reactor-netty client · JDK 17")
                ),
            )

        self.assertIn(
            "square-grpc-service-2 exited (exit code 1) during the measured run of grpc/unary n=5 c=2, "
            "payload small, network loopback, stack netty · reactor-netty client · JDK 17",
            str(caught.exception),
        )

    def test_exit_text_reads_a_negative_code_as_the_signal(self):
        self.assertEqual(exit_text(0), "exit code 0")
        self.assertEqual(exit_text(-9), "killed by SIGKILL")
        self.assertEqual(exit_text(-15), "killed by SIGTERM")


class WaitUntilTests(unittest.TestCase):
    def test_asks_again_after_each_pause_until_ready(self):
        answers, pauses = iter([False, False, True]), []

        self.assertTrue(wait_until(lambda: next(answers), 10, 0.25, sleep=pauses.append))
        self.assertEqual(pauses, [0.25, 0.25])

    def test_gives_up_once_the_timeout_has_passed(self):
        asked = []
        started = time.monotonic()

        self.assertFalse(wait_until(lambda: asked.append(1) or False, 0.3, 0.05))
        self.assertGreaterEqual(time.monotonic() - started, 0.3)
        self.assertGreater(len(asked), 2)

    def test_an_error_in_the_question_ends_the_wait_at_once(self):
        def exited():
            raise LabError("it exited")

        with self.assertRaisesRegex(LabError, "it exited"):
            wait_until(exited, 10, 0.1, sleep=self.fail)


class JavaCommandTests(unittest.TestCase):
    def test_the_options_come_before_the_jar_and_its_arguments_after(self):
        self.assertEqual(
            java_command("/jdk/bin/java", " -XX:+UseSerialGC  -Xmx128m ", "floor.jar", ("server", "grpc")),
            ["/jdk/bin/java", "-XX:+UseSerialGC", "-Xmx128m", "-jar", "floor.jar", "server", "grpc"],
        )
        self.assertEqual(java_command("java", "", "a.jar"), ["java", "-jar", "a.jar"])


if __name__ == "__main__":
    unittest.main()
