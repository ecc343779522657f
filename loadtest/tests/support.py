"""Shared by the tests: the real ab outputs, /proc snapshots and floor runs in fixtures/, and results built from
them."""

import base64
import copy
import datetime
import html
import http.server
import json
import os
import re
import threading

from lab.core import catalogue, repeats, windows
from lab.host import traffic
from lab.load import ab_output, open_loop
from lab.measure import bench
from lab.results import floors, report

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")
# Real floor client results (client.json, with the server's CPU the lab read beside them), one folder per window
# as the lab runs them, for CONCURRENCY=5 N=50 and the aggregator's defaults (in-flight 8, rest-max-connections
# 64), with the lab's JAVA_OPTS, a 1 s warm-up and 2 s measured, on a busy 2-core machine (load 4.6 to 11).
# They come from the client before it reported messages_per_stream: the field was added to grpc_stream_s5_m50.
FLOOR_C5_N50 = os.path.join(FIXTURES, "floor", "c5-n50")
LAB_JAVA_OPTS = "-XX:+UseSerialGC -Xms128m -Xmx128m -Xss512k"
# The aggregator's /actuator/info settings with its defaults, as results.json records them.
AGGREGATOR_DEFAULTS = {"in_flight": 8, "rest_max_connections": 64, "rest_replicas": 1}


def report_texts(data, opening: str):
    """The text of each element of data's report.html that opens with `opening` (e.g. '<div class="alert">')."""
    page = report.render(data, "", "")
    return [html.unescape(text) for text in re.findall(re.escape(opening) + r"(.*?)</", page, re.DOTALL)]


def fixture(name: str) -> str:
    with open(os.path.join(FIXTURES, name)) as handle:
        return handle.read()


def ab_fixture(stem: str):
    """The parsed report and latency curve of fixtures/<stem>.txt and .csv."""
    report = ab_output.parse_report(fixture(stem + ".txt"))
    return report, ab_output.parse_percentile_csv(fixture(stem + ".csv"), report.completed)


def cpu_usage(seconds_by_process, wall_s):
    """A cpu_between()-shaped entry for every process."""
    return {
        name: {"seconds": seconds, "percent": round(seconds / wall_s * 100, 1)}
        for name, seconds in seconds_by_process.items()
    }


def server_side(path_name, completed, n):
    """A consistent server_side record: every square served came from its own downstream call."""
    calls = completed * n
    side = {
        "aggregator_requests": completed,
        "aggregator_ms_per_request": 250.0,
        "downstream_calls": calls,
        "client_us_per_call": 900.0 + 100 * len(path_name),
        "square_service": catalogue.ALL[path_name].downstream,
        "square_calls": calls,
        "square_us_per_call": 40.0,
    }
    if path_name == "grpc/stream":
        side.update(square_streams=completed, square_us_per_call=None, square_us_per_call_upper_bound=300.0)
    return side


# Bytes per call (request, response) at the square service on loopback, small payload, as a real run measured them
# (the connections' tcp_info counters over 5 requests of n = 1000, CONCURRENCY 1).
WIRE_BYTES = {
    "rest/unary": (108, 110),
    "rest/h2c": (39, 68),
    "grpc/unary": (35, 44),
    "grpc/pingpong": (17, 21),
    "grpc/stream": (8, 12),
}
SQUARE_PORTS = {"square-rest-service": 7575, "square-grpc-service": 6565}
LOOPBACK_NETWORK = {
    "description": "loopback, direct: no proxy",
    "proxied": False,
    "rtt_ms": 0.0,
    "rate_mbit_s": None,
    "deadlines": {
        "request_s": 120,
        "call_s": None,
        "client_timeout_s": 120,
        "how": "AB_TIMEOUT for the request and the load generator; the aggregator's own call deadline",
    },
    "aggregator_args": "--aggregator.deadline=120s",
    "aggregator_reported": {"deadline_ms": 120000, "call_deadline_ms": 10000},
}


def bytes_per_call(path_name, calls, wire=None):
    """A run's bytes_per_call as the lab makes it from two readings of the square service's connections: one
    connection, whose counters moved by wire (request, response; by default WIRE_BYTES) per call."""
    service = catalogue.ALL[path_name].downstream
    request, response = wire or WIRE_BYTES[path_name]
    port = SQUARE_PORTS[service]
    connection = ("[::ffff:127.0.0.1]:%d" % port, "[::ffff:127.0.0.1]:40000")
    before = {connection: (5000, 7000)}
    after = {connection: (5000 + request * calls, 7000 + response * calls)}
    return traffic.by_sockets(service, [port], before, after, calls)


def sample_results(concurrency=(100,), n_values=(1000,)):
    """A whole results.json, its runs made from the real ab fixtures, for every path at every setting."""
    stems = {"rest/unary": "ab-rest-square-c100", "grpc/unary": "ab-non2xx", "grpc/stream": "ab-failed-length"}
    runs = []
    for index, (path_name, stem) in enumerate(stems.items()):
        for n in n_values:
            for c in concurrency:
                report, curve = ab_fixture(stem)
                report.failed = report.non2xx = 0
                report.failed_breakdown = dict.fromkeys(report.failed_breakdown, 0)
                # The outputs are of other paths and n: the answers' length is made this path's, as a clean run's.
                report.document_length = len(catalogue.ALL[path_name].expected_body(n).encode())
                downstream = catalogue.ALL[path_name].downstream
                # Shares of the 2 cores over the run, as a real run has them.
                wall = report.time_taken_s
                shares = {
                    "aggregator-service": 0.9 - 0.2 * index,
                    downstream: 0.5 + 0.1 * index,
                    "ab": 0.1,
                    "steal": 0.05,
                    "other": 0.2,
                }
                shares["machine"] = sum(shares.values())
                usage = cpu_usage({name: round(share * wall, 3) for name, share in shares.items()}, wall_s=wall)
                run = {
                    "path": path_name,
                    "payload": "small",
                    "network": "loopback",
                    "n": n,
                    "concurrency": c,
                    "requests": report.completed,
                    "services": catalogue.ALL[path_name].services,
                    "rss_scope": "run",
                }
                run.update(
                    bench.figures(
                        catalogue.ALL[path_name],
                        n,
                        report,
                        curve,
                        usage,
                        {"aggregator-service": 180.5, downstream: 150.25},
                    )
                )
                run["server_side"] = server_side(path_name, report.completed, n)
                run["bytes_per_call"] = bytes_per_call(path_name, report.completed * n)
                runs.append(run)
    return {
        "environment": {
            "cpu_model": "AMD EPYC (fixture)",
            "cores": 2,
            "memory_gib": 23.5,
            "os": "Debian GNU/Linux 12 (bookworm)",
            "kernel": "6.1",
            "jdk": 'openjdk version "17.0.15"',
            "java_opts": "-XX:+UseParallelGC -Xms64m -Xmx256m",
            "ab": "ApacheBench 2.3 (apache2-utils 2.4.71-1~deb12u1)",
            "python": "3.11.7",
            "git_commit": "0123456789abcdef0123456789abcdef01234567",
            "one_box": True,
        },
        "settings": {
            "requests": 1000,
            "concurrency": list(concurrency),
            "n": list(n_values),
            "paths": list(stems),
            "payload": ["small"],
            "network": ["loopback"],
            "networks": {"loopback": dict(LOOPBACK_NETWORK)},
            "warmup_s": 10,
            "ab_timeout_s": 120,
            "java_opts": "-XX:+UseParallelGC -Xms64m -Xmx256m",
            "aggregator_args": "",
            "aggregator": dict(AGGREGATOR_DEFAULTS),
            "ab_command": "ab -n 1000 -c <concurrency> -s 120 -q -r -e <csv> <url>",
            "keep_alive": False,
            "endpoints": {"aggregator-service": "http://127.0.0.1:8080"},
        },
        "started_at": "2026-11-22T10:00:00+00:00",
        "finished_at": "2026-11-22T10:03:00+00:00",
        "runs": runs,
    }


# Bytes per call of the collection shape (100 items): JSON over REST, protobuf over gRPC.
COLLECTION_BYTES = {"rest/unary": (5650, 5660), "grpc/stream": (2420, 2426)}
LAN_NETWORK = {
    "description": "LAN: 0.5 ms round trip, 1 Gbit/s each way",
    "proxied": True,
    "rtt_ms": 0.5,
    "rate_mbit_s": 1000,
    "deadlines": {"request_s": 121, "call_s": 11, "client_timeout_s": 121, "how": "AB_TIMEOUT + 1 s"},
    "aggregator_args": "--aggregator.deadline=121s --aggregator.call-deadline=11s",
    "aggregator_reported": {"deadline_ms": 121000, "call_deadline_ms": 11000},
}


def sample_conditions(payloads=("small", "collection"), networks=("loopback", "lan")):
    """A results.json of rest/unary and grpc/stream at N=20, CONCURRENCY=1, on every payload shape and network given,
    made from sample_results()'s runs: the collection shape's bytes per call as JSON and protobuf have them; on lan,
    Toxiproxy's CPU beside the services', 10 % fewer requests per second and 10 % longer latencies."""
    base = sample_results(concurrency=(1,), n_values=(20,))
    template = {run["path"]: run for run in base["runs"]}
    runs = []
    for net in networks:
        for path_name in ("rest/unary", "grpc/stream"):
            for shape in payloads:
                run = copy.deepcopy(template[path_name])
                run.update(payload=shape, network=net)
                calls = run["completed"] * run["n"]
                if shape == "collection":
                    run["bytes_per_call"] = bytes_per_call(path_name, calls, COLLECTION_BYTES[path_name])
                    run["rps"] = round(run["rps"] * 0.5, 2)
                if net == "lan":
                    run["rps"] = round(run["rps"] * 0.9, 2)
                    run["latency_ms"] = {key: round(value * 1.1, 3) for key, value in run["latency_ms"].items()}
                    run["latency_curve_ms"] = [round(value * 1.1, 3) for value in run["latency_curve_ms"]]
                    run["cpu"]["toxiproxy"] = {
                        "seconds": 0.1,
                        "percent": 14.3,
                        "ms_per_request": round(100 / run["completed"], 3),
                        "us_per_call": round(1e5 / calls, 3),
                    }
                    run["rss_mb"]["toxiproxy"] = 15.0
                runs.append(run)
    base["settings"].update(
        paths=["rest/unary", "grpc/stream"],
        payload=list(payloads),
        network=list(networks),
        networks={name: dict(LOOPBACK_NETWORK if name == "loopback" else LAN_NETWORK) for name in networks},
    )
    base["runs"] = runs
    return base


VEGETA_URL = "http://127.0.0.1:8080/rest/unary/3"
VEGETA_BODY = '[{"1":1},{"2":4},{"3":9}]'
# 2026-11-21T10:13:20Z: results' times are offsets from it.
EPOCH_S = 1_795_256_000


def vegeta_line(seq, sent_us, latency_us, code=200, body=VEGETA_BODY, error="", url=VEGETA_URL):
    """One result as `vegeta encode --to json` writes it (v12.13.0): every field, the timestamp in Go's RFC 3339 with
    its trailing zeros trimmed, the latency in ns, the body in base64 (null when there is none)."""
    sent_ns = EPOCH_S * 10**9 + sent_us * 1000
    when = datetime.datetime.fromtimestamp(sent_ns // 10**9, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
    fraction = ("%09d" % (sent_ns % 10**9)).rstrip("0")
    data = body.encode() if body is not None else b""
    if code == 0:
        data = None
    elif code != 200 and not error:
        error = "%d %s" % (code, http.HTTPStatus(code).phrase)
    return json.dumps(
        {
            "attack": "",
            "seq": seq,
            "code": code,
            "timestamp": when + ("." + fraction if fraction else "") + "Z",
            "latency": latency_us * 1000,
            "bytes_out": 0,
            "bytes_in": len(data or b""),
            "error": error,
            "body": base64.b64encode(data).decode() if data is not None else None,
            "method": "GET",
            "url": url,
            "headers": {"Content-Type": ["application/json"]} if code else None,
        }
    )


def sample_open_results(rates=(10, 40), n=50, duration_s=2, repeated=2):
    """A whole open-loop results.json (LOAD=open): every path at every rate, each repeat read from Vegeta lines by
    lab.open_loop as the lab reads them. Every path answers all it is sent in 20 ms (rest/unary 40 ms) up to 20
    requests a second; above that rest/unary sheds a quarter of them with 503."""
    runs = []
    for path_name in ("rest/unary", "grpc/unary", "grpc/stream"):
        path = catalogue.ALL[path_name]
        body = path.expected_body(n)
        for rate in rates:
            records = []
            for repeat in range(repeated):
                sent = rate * duration_s
                lines = []
                for seq in range(sent):
                    shed = path_name == "rest/unary" and rate > 20 and seq % 4 == 3
                    latency_us = (40_000 if path_name == "rest/unary" else 20_000) + 1000 * repeat + 100 * (seq % 7)
                    lines.append(
                        vegeta_line(
                            seq,
                            seq * 1_000_000 // rate,
                            2000 if shed else latency_us,
                            503 if shed else 200,
                            "{}" if shed else body,
                            url="http://x/",
                        )
                    )
                record = {
                    "path": path_name,
                    "payload": "small",
                    "network": "loopback",
                    "n": n,
                    "concurrency": None,
                    "requests": None,
                    "url": "http://x/",
                    "services": path.services,
                    "started_at": "2026-11-23T10:0%d:00+00:00" % repeat,
                    "verified": {"pre_check": "exact body"},
                    "rss_scope": "run",
                }
                outcome = open_loop.read_results(lines, body, rate, duration_s)
                record.update(outcome, verified=dict(record["verified"], **outcome["verified"]))
                wall = duration_s
                shares = {"aggregator-service": 0.3, path.downstream: 0.2, "vegeta": 0.02, "steal": 0.0, "other": 0.1}
                shares["machine"] = sum(shares.values())
                record.update(
                    bench.resources(
                        path,
                        n,
                        record["ok"],
                        cpu_usage({name: round(share * wall, 3) for name, share in shares.items()}, wall_s=wall),
                        {"aggregator-service": 180.5, path.downstream: 150.25},
                    )
                )
                record["server_side"] = server_side(path_name, record["ok"], n)
                record["bytes_per_call"] = bytes_per_call(path_name, record["ok"] * n)
                records.append(record)
            runs.append(repeats.combine(records, bench.repeat_summary))
    data = sample_results()
    data["settings"].update(
        load="open",
        rate=list(rates),
        duration_s=duration_s,
        requests=None,
        concurrency=[],
        n=[n],
        repeats=repeated,
        floor=False,
        vegeta_command="echo 'GET <url>' | vegeta attack -rate=<rate>/1s -duration=2s -timeout=120s",
        keep_alive=True,
    )
    del data["settings"]["ab_command"]
    data["runs"] = runs
    return data


# The floor fixtures ran on a machine far busier than the ab fixtures' (load 4.6 to 11): at this many times their
# calls, each sample path is below its floor, as on one machine.
FLOOR_SCALE = 20


def floor_records(data, fixture_dir=FLOOR_C5_N50, scale=1):
    """The floor section's runs, as the lab makes them, from the real client result of each window of data, with
    `scale` times their calls."""
    records = []
    for window in windows.plan(data["settings"])[0]:
        record = {"transport": window.transport, "window": window.as_dict(), "folder": "floor"}
        with open(os.path.join(fixture_dir, window.slug(), "client.json")) as handle:
            record.update(json.load(handle))
        for key in ("calls", "calls_per_second", "answers_checked"):
            record[key] = round(record[key] * scale, 3)
        record["floor_settings"] = {"warmup_s": 1.0, "duration_s": 2.0, "java_opts": LAB_JAVA_OPTS, "processors": 2}
        records.append(record)
    return records


def sample_with_floor():
    """sample_results() at CONCURRENCY=5 N=50, with the real floor runs of fixtures/floor/c5-n50 attached."""
    data = sample_results(concurrency=(5,), n_values=(50,))
    data["settings"].update(
        java_opts=LAB_JAVA_OPTS,
        aggregator_args="--aggregator.deadline=120s",
        floor=True,
        floor_duration_s=2.0,
        warmup_s=1.0,
    )
    data["environment"]["java_opts"] = LAB_JAVA_OPTS
    for run in data["runs"]:
        run["load_average_before"] = [1.5, 1.2, 1.0]
    floors.attach(
        data,
        floor_records(data, scale=FLOOR_SCALE),
        extra={
            "started_at": "2026-11-22T10:03:01+00:00",
            "finished_at": "2026-11-22T10:03:40+00:00",
            "java_opts": LAB_JAVA_OPTS,
        },
    )
    return data


class LoopbackServer:
    """A real HTTP server on a free port of 127.0.0.1, answering with `handler`, in a daemon thread."""

    def __init__(self, handler):
        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.port = self._server.server_address[1]
        self.base = "http://127.0.0.1:%d" % self.port
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def close(self):
        self._server.shutdown()
        self._server.server_close()
