"""NETWORK=hosts: a real network namespace and veth pair, made and deleted around a run (root only)."""

import os
import socket
import subprocess
import sys
import unittest
from unittest import mock

from lab.core.catalogue import SQUARE_GRPC, SQUARE_REST
from lab.core.errors import LabError
from lab.core.settings import Settings
from lab.host import hosts, traffic
from lab.stage import services


def namespaces():
    return subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout


@unittest.skipUnless(hosts.available() is None, "needs root and ip: %s" % hosts.available())
class JoinedHostsTests(unittest.TestCase):
    def test_a_process_in_the_squares_namespace_is_reached_across_the_link_and_both_go_with_the_run(self):
        with hosts.joined(True) as found:
            self.assertIn(found.namespace, namespaces())
            # A server in the namespace, on its address only, answered from the machine's side over the veth.
            server = subprocess.Popen(
                found.command(
                    [
                        sys.executable,
                        "-c",
                        "import socket;s=socket.create_server(('%s',0));print(s.getsockname()[1],flush=True);"
                        "c,_=s.accept();c.sendall(b'9');c.close()" % found.squares_address,
                    ]
                ),
                stdout=subprocess.PIPE,
                text=True,
            )
            try:
                port = int(server.stdout.readline())
                with socket.create_connection((found.squares_address, port), timeout=5) as client:
                    self.assertEqual(client.recv(1), b"9")
                # ip netns exec execs the command: its PID is the process's own, readable in this /proc.
                with open("/proc/%d/comm" % server.pid) as comm:
                    self.assertTrue(comm.read().startswith("python"))
            finally:
                server.wait(timeout=10)
                server.stdout.close()
        self.assertNotIn(found.namespace, namespaces())
        self.assertNotEqual(subprocess.run(["ip", "link", "show", found.outside], capture_output=True).returncode, 0)

    def test_the_namespace_is_deleted_whatever_ends_the_run(self):
        with self.assertRaises(RuntimeError):
            with hosts.joined(True, pid=os.getpid() + 1) as found:
                raise RuntimeError("the run failed")
        self.assertNotIn(found.namespace, namespaces())


class HostsNeedsTests(unittest.TestCase):
    def test_no_namespace_when_no_network_needs_one(self):
        with hosts.joined(False) as found:
            self.assertIsNone(found)

    def test_without_root_the_lab_says_what_it_needs(self):
        with mock.patch("os.geteuid", return_value=1000), mock.patch("shutil.which", return_value="/usr/sbin/ip"):
            with self.assertRaisesRegex(LabError, "needs root \\(CAP_NET_ADMIN\\)"):
                with hosts.joined(True):
                    pass

    def test_without_ip_the_lab_says_which_package_has_it(self):
        with mock.patch("shutil.which", return_value=None):
            self.assertEqual(
                hosts.available(), "NETWORK=hosts needs iproute2's ip (Debian: apt-get install -y iproute2)"
            )


class SquaresOnTheirOwnHostTests(unittest.TestCase):
    def test_a_square_service_listens_on_its_hosts_address_with_the_same_ports_and_the_aggregator_dials_it(self):
        settings = Settings.from_env({})
        squares = [
            services.on_host(settings, instance, "10.213.4.2")
            for instance in services.layout(settings, [SQUARE_REST, SQUARE_GRPC])
        ]

        rest, grpc = squares
        self.assertEqual(rest.arguments, ["--server.address=10.213.4.2", "--server.port=7575"])
        self.assertEqual(
            grpc.arguments,
            [
                "--server.address=10.213.4.2",
                "--server.port=6566",
                "--grpc.server.address=10.213.4.2",
                "--grpc.server.port=6565",
            ],
        )
        self.assertEqual(grpc.actuator, "http://10.213.4.2:6566/actuator")
        aggregator = services.aggregator(settings, squares)
        self.assertIn("--aggregator.rest.base-url=http://10.213.4.2:7575", aggregator.arguments)
        self.assertIn("--aggregator.grpc.target=10.213.4.2:6565", aggregator.arguments)
        # The aggregator itself stays on the machine's loopback, where the load generator reaches it.
        self.assertIn("--server.address=127.0.0.1", aggregator.arguments)

    def test_under_tls_the_rest_square_service_serves_and_keeps_its_actuator_on_its_hosts_address(self):
        settings = Settings.from_env({})
        rest = services.on_host(settings, services.layout(settings, [SQUARE_REST])[0], "10.213.4.2")

        secured = services.on_tls(settings, rest, "on")

        self.assertEqual(
            secured.arguments,
            [
                "--server.address=10.213.4.2",
                "--server.port=7443",
                "--management.server.address=10.213.4.2",
                "--management.server.port=7575",
                "--management.server.ssl.enabled=false",
            ],
        )
        self.assertEqual(secured.actuator, "http://10.213.4.2:7575/actuator")

    def test_a_namespaces_connections_are_read_in_it(self):
        done = subprocess.CompletedProcess([], 0, stdout="", stderr="")
        with mock.patch("subprocess.run", return_value=done) as run:
            traffic.read_connections([6565], "lab-hosts-42")

        self.assertEqual(run.call_args.args[0][:4], ["ss", "-N", "lab-hosts-42", "-tinH"])


if __name__ == "__main__":
    unittest.main()
