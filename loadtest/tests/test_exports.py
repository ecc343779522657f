"""A run's exports (lab.results.exports): figures.csv's columns and rows, and figures.om loaded into a real Prometheus
with promtool and read back through its HTTP API."""

import csv
import datetime
import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
import unittest
import urllib.parse
import urllib.request

from lab.results import exports

from .support import sample_results
from .test_report import unavailable

HEADER = (
    "run,path,stack,network,payload,n,load,concurrency,rate,repeat,started_at,"
    "rps,p50_ms,p90_ms,p99_ms,max_ms,cpu_us_per_call,failed,non2xx,rss_mb,rps_spread_percent,error"
)


def repeated(data):
    """sample_results() with rest/unary measured in three repeats, as the lab records them."""
    run = data["runs"][0]
    run["repeats"] = [
        {
            "started_at": "2026-11-22T10:0%d:00+00:00" % index,
            "rps": rps,
            "latency_ms": {"p50": 50.0 + index, "p90": 90.0, "p99": 99.0, "max": 120.0},
            "cpu_us_per_call": 2.5,
        }
        for index, rps in enumerate((1400.0, 1300.0, 1500.0))
    ]
    run["spread"] = {"rps": 14.3}
    return data


class CsvTests(unittest.TestCase):
    def test_one_row_per_run_and_repeat_with_the_whole_runs_figures_on_each(self):
        with tempfile.TemporaryDirectory() as folder:
            exports.write(folder, repeated(sample_results()))
            with open(os.path.join(folder, "figures.csv"), encoding="utf-8") as written:
                text = written.read()
        rows = list(csv.DictReader(text.splitlines()))

        self.assertEqual(text.splitlines()[0], HEADER)
        self.assertEqual(
            [(row["path"], row["repeat"]) for row in rows],
            [("rest/unary", "1"), ("rest/unary", "2"), ("rest/unary", "3"), ("grpc/unary", "1"), ("grpc/stream", "1")],
        )
        first = rows[0]
        self.assertEqual(
            {
                key: first[key]
                for key in (
                    "run",
                    "n",
                    "load",
                    "concurrency",
                    "rate",
                    "started_at",
                    "rps",
                    "p50_ms",
                    "cpu_us_per_call",
                    "failed",
                    "rss_mb",
                    "rps_spread_percent",
                    "error",
                )
            },
            {
                "run": os.path.basename(folder),
                "n": "1000",
                "load": "closed",
                "concurrency": "100",
                "rate": "",
                "started_at": "2026-11-22T10:00:00+00:00",
                "rps": "1400.0",
                "p50_ms": "50.0",
                "cpu_us_per_call": "2.5",
                "failed": "0",
                "rss_mb": "180.5",
                "rps_spread_percent": "14.3",
                "error": "",
            },
        )
        # A run measured once is its own repeat, with the run's figures.
        self.assertEqual((rows[3]["rps"], rows[3]["p99_ms"], rows[3]["cpu_us_per_call"]), ("676.51", "48.293", "1.925"))

    def test_a_failed_run_is_a_row_with_its_error_and_no_figures(self):
        data = sample_results()
        data["runs"][2] = {"path": "grpc/stream", "n": 1000, "concurrency": 100, "error": "answered wrongly"}

        row = list(exports.csv_rows(data, "run-1"))[2]

        self.assertEqual((row["path"], row["error"], row.get("rps")), ("grpc/stream", "answered wrongly", None))


class OpenMetricsTests(unittest.TestCase):
    def test_the_export_loads_into_a_real_prometheus_and_reads_back_through_its_api(self):
        for tool in ("promtool", "prometheus"):
            if not shutil.which(tool):
                unavailable(self, "%s is not installed (apt-get install prometheus)" % tool)
        folder = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, folder, True)
        exports.write(folder, repeated(sample_results()))
        tsdb = os.path.join(folder, "tsdb")
        subprocess.run(
            ["promtool", "tsdb", "create-blocks-from", "openmetrics", os.path.join(folder, "figures.om"), tsdb],
            check=True,
            capture_output=True,
        )
        url = self.start_prometheus(folder, tsdb)

        at = "2026-11-22T10:01:00+00:00"
        rps = self.query(url, 'lab_requests_per_second{path="rest/unary",repeat="2"}', at)
        p99 = self.query(url, 'lab_latency_seconds{path="grpc/unary",quantile="0.99"}', at)
        rss = self.query(url, 'lab_peak_rss_bytes{path="rest/unary"}', at)

        self.assertEqual(len(rps), 1)
        # An empty label (these runs name no stack) is no label in Prometheus.
        self.assertNotIn("stack", rps[0]["metric"])
        self.assertEqual(
            {key: rps[0]["metric"][key] for key in ("run", "network", "payload", "n", "load", "concurrency")},
            {
                "run": os.path.basename(folder),
                "network": "loopback",
                "payload": "small",
                "n": "1000",
                "load": "closed",
                "concurrency": "100",
            },
        )
        self.assertEqual(float(rps[0]["value"][1]), 1300.0)
        self.assertAlmostEqual(float(p99[0]["value"][1]), 0.048293)
        self.assertEqual(float(rss[0]["value"][1]), 180.5 * 2**20)
        self.assertNotIn("repeat", rss[0]["metric"])

    def start_prometheus(self, folder, tsdb):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        config = os.path.join(folder, "prometheus.yml")
        with open(config, "w", encoding="utf-8") as handle:
            handle.write("global:\n  scrape_interval: 1h\n")
        server = subprocess.Popen(
            [
                "prometheus",
                "--config.file=" + config,
                "--storage.tsdb.path=" + tsdb,
                "--storage.tsdb.retention.time=100y",
                "--web.listen-address=127.0.0.1:%d" % port,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self.addCleanup(server.wait, 10)
        self.addCleanup(server.terminate)
        url = "http://127.0.0.1:%d" % port
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(url + "/-/ready", timeout=1):
                    return url
            except OSError:
                time.sleep(0.2)
        self.fail("Prometheus was not ready within 30 s")

    def query(self, url, expression, at):
        moment = datetime.datetime.fromisoformat(at).timestamp()
        query = urllib.parse.urlencode({"query": expression, "time": "%.3f" % moment})
        with urllib.request.urlopen("%s/api/v1/query?%s" % (url, query), timeout=10) as answer:
            body = json.load(answer)
        self.assertEqual(body["status"], "success")
        return body["data"]["result"]


if __name__ == "__main__":
    unittest.main()
