"""Bytes per call, on real readings taken around real ab runs (tests/fixtures/wire).

The readings: `ss -tinH state established '( sport = :17575 or sport = :16565 )'` before and after
`ab -n 40 -c 4` of /rest/unary/100 and then of /grpc/unary/100 (4000 square calls to each square service: 34 pooled
connections to square-rest-service, one channel to square-grpc-service); and square-rest-service's /proc/<pid>/io
before and after `ab -n 500 -c 10` of /rest/square/unary/7 (500 calls, each on a connection of its own).
"""

import os
import socket
import time
import unittest

from lab.core import catalogue
from lab.host import cpu, traffic
from lab.measure import bench
from lab.stage.services import Service

from tests.support import fixture

REST_PORT, GRPC_PORT = 17575, 16565


def readings(port):
    """The before and after readings of the connections on one port."""

    def on_port(name):
        return {
            connection: counts
            for connection, counts in traffic.parse_connections(fixture(name)).items()
            if connection[0].endswith(":%d" % port)
        }

    return on_port("wire/ss-before.txt"), on_port("wire/ss-after.txt")


class ParseTests(unittest.TestCase):
    def test_each_connection_with_its_bytes_received_and_acked(self):
        connections = traffic.parse_connections(fixture("wire/ss-before.txt"))

        self.assertEqual(len(connections), 35)
        # The first connection of the file: bytes_acked:6739 bytes_received:6632.
        self.assertEqual(connections[("[::ffff:127.0.0.1]:17575", "[::ffff:127.0.0.1]:52136")], (6632, 6739))

    def test_a_connection_that_moved_nothing_yet_has_no_counters_and_counts_zero(self):
        text = (
            "0      0      127.0.0.1:6565 127.0.0.1:40000\n"
            "\t cubic wscale:7,7 rto:204 mss:32768 cwnd:10 segs_out:1 segs_in:1\n"
        )

        self.assertEqual(traffic.parse_connections(text), {("127.0.0.1:6565", "127.0.0.1:40000"): (0, 0)})

    def test_no_connections_no_counts(self):
        self.assertEqual(traffic.parse_connections(""), {})

    def test_rchar_and_wchar_from_proc_pid_io(self):
        self.assertEqual(cpu.process_io_chars(fixture("wire/io-before")), (110813793, 690104))
        with self.assertRaisesRegex(ValueError, "no rchar and wchar"):
            cpu.process_io_chars("syscr: 1\n")


class PerCallTests(unittest.TestCase):
    def test_rest_unary_the_pooled_connections_over_4000_calls(self):
        before, after = readings(REST_PORT)

        record = traffic.by_sockets("square-rest-service", [REST_PORT], before, after, 4000)

        # 427,680 bytes received and 434,320 sent by the 34 connections: a GET with its headers, a 200 with its own.
        self.assertEqual(
            {key: record[key] for key in ("request", "response", "connections", "connections_closed")},
            {"request": 106.9, "response": 108.6, "connections": 34, "connections_closed": 0},
        )
        self.assertEqual(record["method"], "tcp_info")

    def test_grpc_unary_its_one_connection_over_4000_calls(self):
        before, after = readings(GRPC_PORT)

        record = traffic.by_sockets("square-grpc-service", [GRPC_PORT], before, after, 4000)

        # 143,879 bytes received and 167,224 sent: HTTP/2 frames with HPACK-compressed headers, protobuf bodies.
        self.assertEqual((record["request"], record["response"], record["connections"]), (36.0, 41.8, 1))

    def test_a_new_connection_counts_whole_and_a_closed_one_is_counted_as_closed(self):
        old, new, gone = ("l:1", "p:1"), ("l:1", "p:2"), ("l:1", "p:3")

        delta = traffic.connections_delta({old: (100, 200), gone: (50, 50)}, {old: (160, 290), new: (40, 10)})

        self.assertEqual(
            delta, {"received": 100, "sent": 100, "connections": 2, "connections_opened": 1, "connections_closed": 1}
        )

    def test_rest_square_from_rchar_and_wchar_over_500_calls(self):
        record = traffic.from_syscalls(
            "square-rest-service",
            cpu.process_io_chars(fixture("wire/io-before")),
            cpu.process_io_chars(fixture("wire/io-after")),
            500,
        )

        # 59,458 bytes read and 64,208 written by Tomcat's read and write calls.
        self.assertEqual((record["request"], record["response"], record["method"]), (118.9, 128.4, "rchar/wchar"))

    def test_no_calls_no_figures(self):
        self.assertEqual(traffic.per_call(10, 10, 0), {"request": None, "response": None})


class RunRecordTests(unittest.TestCase):
    """How a measured run picks its readings and its number of calls."""

    def wire(self, path_name):
        services = [
            Service("square-rest-service", [1], None, serving_ports=[REST_PORT]),
            Service("square-grpc-service", [2], None, serving_ports=[GRPC_PORT]),
        ]
        return bench._Wire(catalogue.ALL[path_name], services)

    def test_an_aggregator_path_reads_its_square_services_connections_on_the_port_it_serves(self):
        wire = self.wire("grpc/unary")

        self.assertEqual((wire.service, wire.ports, wire.by_sockets), ("square-grpc-service", [GRPC_PORT], True))

    def test_rest_square_reads_rchar_and_wchar_instead(self):
        wire = self.wire("rest/square")
        before = cpu.Sample(0, {}, 0, 0, process_io={"square-rest-service": (1000, 2000)})
        after = cpu.Sample(1, {}, 0, 0, process_io={"square-rest-service": (3000, 2600)})

        self.assertFalse(wire.by_sockets)
        self.assertEqual(
            {key: wire.per_call(before, after, 20)[key] for key in ("request", "response", "method")},
            {"request": 100.0, "response": 30.0, "method": "rchar/wchar"},
        )

    def test_the_calls_are_the_square_services_own_count_when_it_was_read(self):
        self.assertEqual(bench._square_calls({"server_side": {"square_calls": 4000}, "downstream_calls": 3999}), 4000)
        self.assertEqual(bench._square_calls({"server_side": {"error": "x"}, "downstream_calls": 3999}), 3999)


class LiveTests(unittest.TestCase):
    """The same readings through the real ss and /proc, on this process's own connection."""

    def test_a_connection_of_this_process_is_read_with_its_bytes(self):
        with socket.socket() as server:
            server.bind(("127.0.0.1", 0))
            server.listen()
            port = server.getsockname()[1]
            with socket.create_connection(("127.0.0.1", port)) as client:
                accepted, _ = server.accept()
                with accepted:
                    client.sendall(b"x" * 1000)
                    received = 0
                    while received < 1000:
                        received += len(accepted.recv(1000))
                    accepted.sendall(b"y" * 300)
                    received = 0
                    while received < 300:
                        received += len(client.recv(300))
                    # What was sent counts once it is acknowledged, which a delayed ACK may hold back a moment.
                    deadline = time.monotonic() + 2
                    connections = traffic.read_connections([port])
                    while list(connections.values()) != [(1000, 300)] and time.monotonic() < deadline:
                        time.sleep(0.05)
                        connections = traffic.read_connections([port])

        self.assertEqual(list(connections.values()), [(1000, 300)])

    def test_this_process_has_rchar_and_wchar(self):
        sample = cpu.take_sample({"this test": os.getpid()})

        self.assertGreater(sample.process_io["this test"][0], 0)


if __name__ == "__main__":
    unittest.main()
