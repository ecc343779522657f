"""monitoring/run-prometheus.sh as a person or the lab uses it: a real Prometheus on a free port of 127.0.0.1,
started and stopped in the foreground and in the background, and refused on a taken port."""

import os
import re
import signal
import socket
import subprocess
import tempfile
import unittest
from pathlib import Path

from tests.support import RUN_PROMETHEUS, free_port, http_get, port_open, run, stop_process, tool, wait_until


class RunPrometheusTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        tool("prometheus")

    def setUp(self):
        self.port = free_port()
        self.workdir = tempfile.TemporaryDirectory(prefix="run-prometheus-test.")
        self.addCleanup(self.workdir.cleanup)

    def test_foreground_run_serves_until_terminated_and_removes_its_data(self):
        log = Path(self.workdir.name) / "foreground.log"
        with open(log, "w") as out:
            process = subprocess.Popen(
                [str(RUN_PROMETHEUS), "--port", str(self.port)],
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self.addCleanup(stop_process, process)

        wait_until("Prometheus ready", lambda: process.poll() is None and self.ready(), timeout=60)
        data_dir = re.search(r"data (\S+)\)", log.read_text()).group(1)
        self.assertTrue(Path(data_dir).is_dir())

        os.killpg(process.pid, signal.SIGTERM)
        self.assertEqual(0, process.wait(30), log.read_text())
        self.assertFalse(port_open(self.port), "something still listens after the stop")
        self.assertFalse(Path(data_dir).exists(), "the temporary data folder was left behind")

    def test_background_run_returns_when_ready_and_stop_ends_it(self):
        pid_file = Path(self.workdir.name) / "prometheus.pid"
        data_dir = Path(self.workdir.name) / "kept-data"
        started = run(
            [
                str(RUN_PROMETHEUS),
                "--background",
                "--pid-file",
                str(pid_file),
                "--port",
                str(self.port),
                "--data-dir",
                str(data_dir),
            ]
        )
        self.addCleanup(run, [str(RUN_PROMETHEUS), "--stop", "--pid-file", str(pid_file)])
        self.assertEqual(0, started.returncode, started.stderr)
        self.assertTrue(self.ready(), "not ready when --background returned")
        self.assertEqual(started.stdout.strip(), pid_file.read_text().strip())

        again = run([str(RUN_PROMETHEUS), "--background", "--pid-file", str(pid_file), "--port", str(free_port())])
        self.assertEqual(1, again.returncode)
        self.assertIn("already running", again.stderr)

        stopped = run([str(RUN_PROMETHEUS), "--stop", "--pid-file", str(pid_file)])
        self.assertEqual(0, stopped.returncode, stopped.stderr)
        self.assertFalse(port_open(self.port), "something still listens after --stop")
        self.assertFalse(pid_file.exists())
        self.assertTrue((data_dir / "wal").is_dir(), "a --data-dir given by the caller is kept")

    def test_refuses_a_port_that_is_taken(self):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
            taken.bind(("127.0.0.1", 0))
            taken.listen()
            port = taken.getsockname()[1]
            refused = run([str(RUN_PROMETHEUS), "--port", str(port)], timeout=30)
        self.assertEqual(1, refused.returncode)
        self.assertIn(f"port {port} is already in use", refused.stderr)

    def test_refuses_a_scrape_target_that_is_not_host_and_port(self):
        refused = run(
            [str(RUN_PROMETHEUS), "--port", str(self.port)],
            timeout=30,
            env={**os.environ, "AGGREGATOR_ADDRESS": "http://127.0.0.1:8080/"},
        )
        self.assertNotEqual(0, refused.returncode)
        self.assertIn("must be host:port", refused.stderr)
        self.assertFalse(port_open(self.port))

    def ready(self):
        try:
            return http_get(f"http://127.0.0.1:{self.port}/-/ready", timeout=2)[0] == 200
        except OSError:
            return False


if __name__ == "__main__":
    unittest.main()
