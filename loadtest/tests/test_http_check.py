"""Port, health and answer checks, against a real HTTP server on loopback (the standard library's)."""

import http.server
import os
import socket
import subprocess
import unittest

from lab.core import catalogue
from lab.core.errors import LabError
from lab.load import http_check

from tests import support


class _Handler(http.server.BaseHTTPRequestHandler):
    # path -> (status, content type, body)
    answers = {
        "/actuator/health": (200, "application/vnd.spring-boot.actuator.v3+json", '{"status":"UP"}'),
        "/rest/unary/3": (200, "application/json", '[{"1":1},{"2":4},{"3":9}]'),
        "/grpc/unary/3": (200, "application/json", '[{"1":1},{"3":9},{"2":4}]'),
        "/grpc/stream/3": (503, "application/problem+json", '{"title":"Service Unavailable","status":503}'),
        "/rest/square/unary/7": (200, "text/plain", "49"),
        # An aggregator that knows the payload shapes, and one from before them, which ignores the query.
        "/rest/unary/1?payload=no-such-shape": (
            400,
            "application/problem+json",
            '{"status":400,"detail":"payload must be one of small, wide, deep, collection; got \'no-such-shape\'"}',
        ),
        "/grpc/unary/1?payload=no-such-shape": (200, "application/json", '[{"1":1}]'),
    }

    def do_GET(self):
        status, content_type, body = self.answers.get(self.path, (404, "text/plain", "no"))
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


class HttpCheckTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = support.LoopbackServer(_Handler)
        cls.base = cls.server.base

    @classmethod
    def tearDownClass(cls):
        cls.server.close()

    def mismatch(self, path_name, n):
        path = catalogue.ALL[path_name]
        return http_check.answer_mismatch(
            path, path.url({"aggregator-service": self.base, "square-rest-service": self.base}, n), n, 5
        )

    def test_an_aggregator_that_refuses_an_unknown_payload_shape_knows_the_shapes(self):
        urls = {"aggregator-service": self.base}

        self.assertIsNone(
            http_check.payload_shapes_unknown(catalogue.ALL["rest/unary"].url(urls, 1, "no-such-shape"), 5)
        )
        self.assertEqual(
            http_check.payload_shapes_unknown(catalogue.ALL["grpc/unary"].url(urls, 1, "no-such-shape"), 5),
            "GET %s/grpc/unary/1?payload=no-such-shape answered 200, not 400 naming the payload shapes: "
            "this aggregator does not know them (a jar from before PAYLOAD?), so every shape would be "
            "measured as the small call; rebuild it" % self.base,
        )

    def test_the_exact_expected_answer_passes(self):
        self.assertIsNone(self.mismatch("rest/unary", 3))

    def test_squares_out_of_order_are_caught_where_they_differ(self):
        problem = self.mismatch("grpc/unary", 3)

        self.assertIn("body differs from the expected one at character 11", problem)

    def test_an_error_status_is_caught(self):
        problem = self.mismatch("grpc/stream", 3)

        self.assertIn("status 503, expected 200", problem)
        self.assertIn("Content-Type 'application/problem+json'", problem)

    def test_a_right_number_with_the_wrong_content_type_is_caught(self):
        self.assertIn("Content-Type 'text/plain', expected application/json", self.mismatch("rest/square", 7))

    def test_nothing_listening_is_reported_not_raised(self):
        with socket.socket() as closed:
            closed.bind(("127.0.0.1", 0))
            port = closed.getsockname()[1]
        path = catalogue.ALL["rest/unary"]

        problem = http_check.answer_mismatch(path, "http://127.0.0.1:%d/rest/unary/3" % port, 3, 2)

        self.assertIn("failed", problem)

    def test_a_listening_port_is_taken_and_a_closed_one_free(self):
        self.assertTrue(http_check.port_taken(self.server.port))
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            free = probe.getsockname()[1]
        self.assertFalse(http_check.port_taken(free))

    def test_a_taken_port_is_refused_with_why_it_is_needed(self):
        with self.assertRaises(LabError) as raised:
            http_check.refuse_taken([self.server.port], "the profile runs the services there")

        self.assertTrue(
            str(raised.exception).startswith(
                "port %d is in use: the profile runs the services there" % self.server.port
            )
        )

    def test_waits_until_every_url_answers_200_and_names_a_service_that_exited(self):
        http_check.wait_answering([self.base + "/rest/unary/3"], {"aggregator": os.getpid()}, 5, "ours")

        with self.assertRaises(LabError) as raised:
            http_check.wait_answering([self.base + "/grpc/stream/3"], {"aggregator": os.getpid()}, 1, "ours")
        self.assertEqual("ours did not answer %s/grpc/stream/3 within 1 s" % self.base, str(raised.exception))

        exited = subprocess.Popen(["true"])
        exited.wait()
        with self.assertRaises(LabError) as raised:
            http_check.wait_answering([self.base + "/rest/unary/3"], {"aggregator": exited.pid}, 5, "theirs")
        self.assertEqual("theirs's aggregator exited while starting: see its log", str(raised.exception))

    def test_waits_for_health_and_names_a_service_that_never_comes_up(self):
        healthy = ("square-rest-service", os.getpid(), self.base + "/actuator/health")
        silent = ("aggregator-service", os.getpid(), self.base + "/nothing")

        self.assertIsNone(http_check.wait_healthy([healthy], timeout_s=5))
        problem = http_check.wait_healthy([healthy, silent], timeout_s=1)
        self.assertEqual(problem.service, "aggregator-service")

    def test_a_service_that_exits_during_start_up_is_reported_at_once(self):
        problem = http_check.wait_healthy(
            [("square-grpc-service", 4242, self.base + "/nothing")], timeout_s=30, alive=lambda pid: False
        )

        self.assertEqual(problem.message, "square-grpc-service (pid 4242) exited during start-up")


if __name__ == "__main__":
    unittest.main()
