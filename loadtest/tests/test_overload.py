import http.server
import threading
import unittest

from lab.core import metrics
from lab.experiments import overload

from tests import support


def _aggregator_page(le_counts, count, uri="/grpc/stream/{n}"):
    """A page with the aggregator's 503 histogram for one path, as Spring writes it."""
    labels = (
        'application="aggregator-service",error="none",exception="none",method="GET",outcome="SERVER_ERROR",'
        'status="503",uri="%s"' % uri
    )
    lines = ["# HELP http_server_requests_seconds", "# TYPE http_server_requests_seconds histogram"]
    lines += ['http_server_requests_seconds_bucket{%s,le="%s"} %d' % (labels, le, n) for le, n in le_counts]
    lines += [
        'http_server_requests_seconds_bucket{%s,le="+Inf"} %d' % (labels, count),
        "http_server_requests_seconds_count{%s} %d" % (labels, count),
        "http_server_requests_seconds_sum{%s} %f" % (labels, count * 0.002),
    ]
    return metrics.parse("\n".join(lines) + "\n")


class _Handler(http.server.BaseHTTPRequestHandler):
    """Sheds every third request with Retry-After, answers one in ten wrongly, and the rest correctly."""

    protocol_version = "HTTP/1.1"
    count = 0
    lock = threading.Lock()

    def do_GET(self):
        if self.path == "/actuator/health":
            return self._answer(200, b'{"status":"UP"}')
        with _Handler.lock:
            _Handler.count += 1
            count = _Handler.count
        if count % 3 == 0:
            return self._answer(
                503,
                b'{"title":"Service Unavailable","status":503,"detail":"busy"}',
                retry_after="1",
                content_type="application/problem+json",
            )
        if count % 10 == 1:
            return self._answer(200, b'[{"1":2}]')
        return self._answer(200, overload.expected_body(3))

    def _answer(self, status, body, retry_after=None, content_type="application/json"):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        if retry_after:
            self.send_header("Retry-After", retry_after)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


class OverloadTest(unittest.TestCase):
    def test_the_expected_body_is_the_contract_array(self):
        self.assertEqual(overload.expected_body(3), b'[{"1":1},{"2":4},{"3":9}]')
        self.assertEqual(overload.expected_body(0), b"[]")

    def test_counts_correct_wrong_and_shed_answers_and_waits_as_told(self):
        server = support.LoopbackServer(_Handler)
        try:
            result = overload.run(server.base, "grpc/stream", 3, clients=2, duration_s=1.5)
        finally:
            server.close()
        self.assertGreater(result["correct"], 0)
        self.assertGreater(result["wrong"], 0)
        self.assertEqual(result["errors"], {})
        # Each client waits the second it is told after a shed, so in 1.5 s it is shed at most twice.
        self.assertGreaterEqual(result["shed"], 1)
        self.assertLessEqual(result["shed"], 4)
        self.assertAlmostEqual(result["goodput_rps"], result["correct"] / result["duration_s"], delta=0.1)
        self.assertGreater(result["health"]["checks"], 0)
        self.assertEqual(result["health"]["failures"], 0)

    def test_the_servers_shed_time_comes_from_the_aggregators_503_histogram_between_two_scrapes(self):
        before = _aggregator_page([("0.001", 10), ("0.002796201", 10), ("0.050331646", 10)], 10)
        # 200 sheds more: 120 within 1 ms, 198 within 2.8 ms, all 200 within 50.3 ms.
        after = _aggregator_page([("0.001", 130), ("0.002796201", 208), ("0.050331646", 210)], 210)
        self.assertEqual(
            overload.server_shed_ms("grpc/stream", before, after),
            {"count": 200, "p50_at_most": 1.0, "p99_at_most": 2.8},
        )
        self.assertEqual(
            overload.server_shed_ms("rest/unary", before, after), {"count": 0, "p50_at_most": None, "p99_at_most": None}
        )
        self.assertIsNone(overload.server_shed_ms("grpc/stream", None, after))


if __name__ == "__main__":
    unittest.main()
