"""End to end: the three service jars and a real Prometheus (monitoring/run-prometheus.sh with
monitoring/prometheus.yml, its targets moved to free ports), known traffic through every aggregator path, and
the metrics read back through Prometheus's HTTP API: exact counts per transport from both sides of the wire,
the recording rules, and every query of the Grafana dashboard."""

import datetime
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
import unittest
from pathlib import Path

from tests.support import (
    IN_CI,
    MONITORING,
    REPO,
    RUN_PROMETHEUS,
    free_port,
    http_get,
    port_open,
    prometheus_query,
    run,
    stop_process,
    tail,
    tool,
    wait_until,
)

VERSION = "1.0.0-SNAPSHOT"
TRANSPORTS = {
    "rest_unary": "/rest/unary/{n}",
    "rest_h2c": "/rest/h2c/{n}",
    "grpc_unary": "/grpc/unary/{n}",
    "grpc_pingpong": "/grpc/pingpong/{n}",
    "grpc_stream": "/grpc/stream/{n}",
}
# What the square services can tell apart: one REST endpoint for HTTP/1.1 and HTTP/2, one bidi method for the
# pipelined stream and ping-pong; their recording rules are labelled so.
SQUARE_SIDE_TRANSPORTS = {"rest_unary", "grpc_unary", "grpc_stream"}
SIZES = (1, 3, 10)
REQUESTS = len(SIZES)
SQUARES = sum(SIZES)
JOBS = {"aggregator-service", "square-rest-service", "square-grpc-service"}
DASHBOARD = MONITORING / "grafana" / "dashboards" / "rest-vs-grpc.json"
# What Grafana puts in place of its variables; 1m holds about twelve 5s scrapes, so rate() has points.
GRAFANA_VARIABLES = {"$__rate_interval": "1m", "$__interval": "5s", "$__range": "5m"}
STARTUP_SECONDS = 180
SCRAPE_WAIT_SECONDS = 60
# Small and quick to start: this is a functional test on a shared 2-core machine, not a benchmark.
JVM_OPTIONS = ["-Xmx256m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"]


def jar(module):
    path = REPO / module / "target" / f"{module}-{VERSION}.jar"
    if not path.is_file():
        message = f"{path} is missing: build first (./mvnw -B -q install -DskipTests)"
        if IN_CI:
            raise AssertionError(message)
        raise unittest.SkipTest(message)
    return path


def scrape_time(rfc3339):
    """Seconds since the epoch of a Prometheus timestamp such as 2026-01-02T03:04:05.123456789Z (Go prints up
    to nine fractional digits, more than datetime takes, and an offset instead of Z outside UTC)."""
    match = re.fullmatch(r"([^.]+?)(\.\d+)?(Z|[+-]\d\d:\d\d)", rfc3339)
    whole, fraction, zone = match.groups()
    moment = datetime.datetime.fromisoformat(whole + ("+00:00" if zone == "Z" else zone))
    return moment.timestamp() + float(fraction or 0)


def expected_body(n):
    return "[" + ",".join(f'{{"{i}":{i * i}}}' for i in range(1, n + 1)) + "]"


class PrometheusEndToEndTests(unittest.TestCase):
    processes = {}

    @classmethod
    def setUpClass(cls):
        java = tool("java")
        tool("prometheus")
        jars = {module: jar(module) for module in JOBS}
        cls.workdir = Path(tempfile.mkdtemp(prefix="prometheus-e2e."))
        cls.addClassCleanup(shutil.rmtree, cls.workdir, ignore_errors=True)

        cls.ports = {
            name: free_port() for name in ("aggregator", "square_rest", "square_grpc", "square_grpc_http", "prometheus")
        }
        cls.prometheus = f"http://127.0.0.1:{cls.ports['prometheus']}"
        local = "--server.address=127.0.0.1"
        cls.start(java, jars["square-rest-service"], [local, f"--server.port={cls.ports['square_rest']}"])
        cls.start(
            java,
            jars["square-grpc-service"],
            [
                local,
                f"--server.port={cls.ports['square_grpc_http']}",
                "--grpc.server.address=127.0.0.1",
                f"--grpc.server.port={cls.ports['square_grpc']}",
            ],
        )
        cls.start(
            java,
            jars["aggregator-service"],
            [
                local,
                f"--server.port={cls.ports['aggregator']}",
                f"--aggregator.rest.base-url=http://127.0.0.1:{cls.ports['square_rest']}",
                f"--aggregator.grpc.target=127.0.0.1:{cls.ports['square_grpc']}",
            ],
        )
        cls.with_logs(cls.wait_for_health)

        cls.start_prometheus()
        cls.with_logs(cls.wait_for_targets)
        cls.drive_traffic()
        cls.with_logs(cls.wait_for_scrape_after_traffic)

    # --- what the tests check --------------------------------------------------------------------------------

    def test_prometheus_scrapes_the_three_services_on_their_actuators(self):
        targets = self.active_targets()
        self.assertEqual(JOBS, {t["labels"]["job"] for t in targets})
        expected_urls = {
            f"http://127.0.0.1:{self.ports[p]}/actuator/prometheus"
            for p in ("aggregator", "square_rest", "square_grpc_http")
        }
        self.assertEqual(expected_urls, {t["scrapeUrl"] for t in targets})
        self.assertEqual({"up"}, {t["health"] for t in targets})

    def test_fanout_timer_counts_every_request_per_transport(self):
        self.assertEqual(
            {(t, "success"): REQUESTS for t in TRANSPORTS},
            self.nonzero("sum by (transport, outcome) (aggregator_fanout_seconds_count)", "transport", "outcome"),
        )
        self.assertEqual(
            {(t,): REQUESTS for t in TRANSPORTS},
            self.nonzero('sum by (transport) (aggregator_fanout_seconds_bucket{le="+Inf"})', "transport"),
            "histogram buckets, not only a count",
        )

    def test_downstream_calls_count_every_square_per_transport(self):
        self.assertEqual(
            {(t, "success"): SQUARES for t in TRANSPORTS},
            self.nonzero("sum by (transport, outcome) (aggregator_downstream_calls_total)", "transport", "outcome"),
        )

    def test_downstream_latency_in_flight_and_stream_messages(self):
        self.assertEqual(
            {(t, "success"): SQUARES for t in TRANSPORTS},
            self.nonzero(
                "sum by (transport, outcome) (aggregator_downstream_latency_seconds_count)", "transport", "outcome"
            ),
        )
        self.assertEqual(
            {(t,): SQUARES for t in TRANSPORTS},
            self.nonzero('sum by (transport) (aggregator_downstream_latency_seconds_bucket{le="+Inf"})', "transport"),
        )
        self.assertEqual(
            {},
            self.nonzero("sum by (transport) (aggregator_downstream_inflight)", "transport"),
            "calls still in flight after every answer came back",
        )
        # The pipelined stream's messages and the ping-pong's.
        self.assertEqual(
            {("sent",): 2 * SQUARES, ("received",): 2 * SQUARES},
            self.nonzero("sum by (direction) (aggregator_stream_messages_total)", "direction"),
        )

    def test_square_services_saw_every_call(self):
        rest = (
            'sum(http_server_requests_seconds_count{application="square-rest-service",'
            'uri="/rest/square/unary/{number}"})'
        )
        # rest/unary and rest/h2c on the one endpoint; grpc/stream and grpc/pingpong on the one bidi method.
        self.assertEqual({(): 2 * SQUARES}, self.nonzero(rest))
        grpc = '{application="square-grpc-service",service="vinsmath.SquareRpc"}'
        self.assertEqual(
            {("findSquareUnary",): SQUARES, ("findSquareBiStream",): 2 * SQUARES},
            self.nonzero(f"sum by (method) (grpc_server_requests_received_messages_total{grpc})", "method"),
        )
        self.assertEqual(
            {("findSquareUnary",): SQUARES, ("findSquareBiStream",): 2 * SQUARES},
            self.nonzero(f"sum by (method) (grpc_server_responses_sent_messages_total{grpc})", "method"),
        )
        self.assertEqual(
            {("findSquareUnary",): SQUARES, ("findSquareBiStream",): 2 * REQUESTS},
            self.nonzero(f"sum by (method) (grpc_server_processing_duration_seconds_count{grpc})", "method"),
            "one unary call per square, one stream per request",
        )

    def test_jvm_and_process_metrics_for_every_service(self):
        for metric in (
            "process_cpu_usage",
            "process_cpu_time_ns_total",
            "jvm_memory_used_bytes",
            "jvm_threads_live_threads",
        ):
            with self.subTest(metric=metric):
                series = self.query(f"count by (application) ({metric})")
                self.assertEqual(JOBS, {s["metric"].get("application") for s in series})

    def test_recording_rules_answer_per_transport(self):
        rules = {
            rule: ("transport", set(TRANSPORTS))
            for rule in (
                "transport:aggregator_downstream_calls:rate1m",
                "transport:aggregator_fanout_seconds:p99_1m",
                "transport:aggregator_downstream_latency_seconds:p99_1m",
            )
        }
        rules.update(
            {
                rule: ("transport", SQUARE_SIDE_TRANSPORTS)
                for rule in ("transport:square_server_calls:rate1m", "transport:square_server_seconds_per_call:mean1m")
            }
        )
        rules["application:process_cpu_seconds:rate1m"] = ("application", JOBS)
        for rule, (label, values) in rules.items():
            with self.subTest(rule=rule):
                # A rate needs two scrapes in its window, and the rule one evaluation after them.
                wait_until(
                    f"{rule} for every {label}",
                    lambda rule=rule, label=label, values=values: self.labels_of(self.query(rule), label) == values,
                    timeout=SCRAPE_WAIT_SECONDS,
                    interval=1,
                )

    def test_every_dashboard_query_is_accepted_and_returns_data(self):
        for title, expr in self.dashboard_queries():
            with self.subTest(panel=title, expr=expr):
                answer = prometheus_query(self.prometheus, expr)
                self.assertEqual("success", answer["status"], answer.get("error"))
                wait_until(
                    f"data for '{expr}'",
                    lambda expr=expr: prometheus_query(self.prometheus, expr)["data"]["result"],
                    timeout=SCRAPE_WAIT_SECONDS,
                    interval=1,
                )

    # --- helpers ---------------------------------------------------------------------------------------------

    @classmethod
    def start(cls, java, jar_path, arguments):
        module = jar_path.parent.parent.name
        log = cls.workdir / f"{module}.log"
        with open(log, "w") as out:
            process = subprocess.Popen(
                [java, *JVM_OPTIONS, "-jar", str(jar_path), *arguments],
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        cls.processes[module] = (process, log)
        cls.addClassCleanup(stop_process, process)

    @classmethod
    def start_prometheus(cls):
        pid_file = cls.workdir / "prometheus.pid"
        env = {
            **os.environ,
            "AGGREGATOR_ADDRESS": f"127.0.0.1:{cls.ports['aggregator']}",
            "SQUARE_REST_ADDRESS": f"127.0.0.1:{cls.ports['square_rest']}",
            "SQUARE_GRPC_ACTUATOR_ADDRESS": f"127.0.0.1:{cls.ports['square_grpc_http']}",
        }
        started = run(
            [str(RUN_PROMETHEUS), "--background", "--pid-file", str(pid_file), "--port", str(cls.ports["prometheus"])],
            env=env,
            timeout=300,
        )
        cls.addClassCleanup(cls.stop_prometheus, pid_file)
        if started.returncode != 0:
            raise AssertionError(f"run-prometheus.sh failed:\n{started.stderr}")

    @classmethod
    def stop_prometheus(cls, pid_file):
        stopped = run([str(RUN_PROMETHEUS), "--stop", "--pid-file", str(pid_file)], timeout=60)
        if stopped.returncode != 0 or port_open(cls.ports["prometheus"]):
            raise AssertionError(f"Prometheus did not stop cleanly:\n{stopped.stderr}")

    @classmethod
    def wait_for_health(cls):
        def healthy(port):
            try:
                return http_get(f"http://127.0.0.1:{port}/actuator/health", timeout=2) == (200, '{"status":"UP"}')
            except OSError:
                return False

        def all_up():
            for module, (process, _) in cls.processes.items():
                if process.poll() is not None:
                    raise AssertionError(f"{module} exited with status {process.returncode}")
            return all(healthy(cls.ports[p]) for p in ("aggregator", "square_rest", "square_grpc_http"))

        wait_until("the three services to be UP", all_up, timeout=STARTUP_SECONDS)

    @classmethod
    def wait_for_targets(cls):
        def all_up():
            targets = cls.active_targets()
            return len(targets) == len(JOBS) and all(t["health"] == "up" for t in targets)

        wait_until("every Prometheus target to be up", all_up, timeout=SCRAPE_WAIT_SECONDS)

    @classmethod
    def drive_traffic(cls):
        for path in TRANSPORTS.values():
            for n in SIZES:
                url = f"http://127.0.0.1:{cls.ports['aggregator']}{path.format(n=n)}"
                status, body = http_get(url, timeout=30)
                if (status, body) != (200, expected_body(n)):
                    raise AssertionError(f"GET {url} answered {status} {body[:200]}")
        cls.traffic_ended = time.time()

    @classmethod
    def wait_for_scrape_after_traffic(cls):
        """Until every target has had a successful scrape that began after the last request was answered, so
        that each service's counters are read back final, not from a scrape in the middle of the traffic."""

        def scraped_after_traffic(target):
            return target["health"] == "up" and scrape_time(target["lastScrape"]) > cls.traffic_ended

        wait_until(
            "a scrape of every target after the traffic",
            lambda: all(scraped_after_traffic(t) for t in cls.active_targets()),
            timeout=SCRAPE_WAIT_SECONDS,
        )

    @classmethod
    def with_logs(cls, step):
        try:
            step()
        except AssertionError as error:
            logs = "\n".join(f"--- {module} ---\n{tail(log)}" for module, (_, log) in cls.processes.items())
            raise AssertionError(f"{error}\n{logs}") from error

    @classmethod
    def active_targets(cls):
        _, body = http_get(f"{cls.prometheus}/api/v1/targets?state=active")
        return json.loads(body)["data"]["activeTargets"]

    @classmethod
    def query(cls, promql):
        answer = prometheus_query(cls.prometheus, promql)
        if answer["status"] != "success":
            raise AssertionError(f"{promql}: {answer.get('errorType')}: {answer.get('error')}")
        return answer["data"]["result"]

    @classmethod
    def nonzero(cls, promql, *labels):
        """{label values: integer value} of the query's series, leaving out zeros (series made before use)."""
        values = {}
        for series in cls.query(promql):
            value = float(series["value"][1])
            if value:
                values[tuple(series["metric"].get(label) for label in labels)] = (
                    int(value) if value.is_integer() else value
                )
        return values

    @staticmethod
    def labels_of(series, label):
        return {s["metric"].get(label) for s in series}

    @staticmethod
    def dashboard_queries():
        dashboard = json.loads(DASHBOARD.read_text())
        for panel in dashboard["panels"]:
            for target in panel.get("targets", []):
                expr = target["expr"]
                for variable, value in GRAFANA_VARIABLES.items():
                    expr = expr.replace(variable, value)
                yield panel["title"], expr


if __name__ == "__main__":
    unittest.main()
