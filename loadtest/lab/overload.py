"""Overload: many clients that honour Retry-After, against one path, for a fixed time.

ab cannot do this: it never waits when told to, so it measures how fast a 503 comes back rather than how
much correct work gets done. Here each client loops: GET, check the body against the exact expected
answer, and on a 503 with Retry-After sleep that long before asking again. Health is polled beside it.
The figure that matters is goodput: correct answers per second. Beside the clients' own timing of a shed
(which on one machine includes waiting for the CPU the clients share with the services), the aggregator's
own histogram of its 503 answers says how long a shed took inside it.
"""

import http.client
import json
import statistics
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from typing import Dict, List, Optional

from . import catalogue, server_metrics
from .errors import MetricsError


def expected_body(n: int) -> bytes:
    return catalogue.ALL["rest/unary"].expected_body(n).encode()


@dataclass
class Tally:
    correct: int = 0
    wrong: int = 0
    shed: int = 0
    errors: Dict[str, int] = field(default_factory=dict)
    answer_ms: List[float] = field(default_factory=list)
    shed_ms: List[float] = field(default_factory=list)

    def add_error(self, kind: str) -> None:
        self.errors[kind] = self.errors.get(kind, 0) + 1


def _client(
    url: urllib.parse.SplitResult, expected: bytes, stop_at: float, timeout_s: float, tally: Tally, lock: threading.Lock
) -> None:
    connection: Optional[http.client.HTTPConnection] = None
    while time.monotonic() < stop_at:
        if connection is None:
            connection = http.client.HTTPConnection(url.netloc, timeout=timeout_s)
        started = time.monotonic()
        try:
            connection.request("GET", url.path + (("?" + url.query) if url.query else ""))
            response = connection.getresponse()
            body = response.read()
        except (OSError, http.client.HTTPException) as error:
            with lock:
                tally.add_error(type(error).__name__)
            connection.close()
            connection = None
            time.sleep(0.1)
            continue
        elapsed_ms = (time.monotonic() - started) * 1000
        retry_after = response.getheader("Retry-After")
        with lock:
            if response.status == 200 and body == expected:
                tally.correct += 1
                tally.answer_ms.append(elapsed_ms)
            elif response.status == 200:
                tally.wrong += 1
            elif response.status == 503 and retry_after is not None:
                tally.shed += 1
                tally.shed_ms.append(elapsed_ms)
            else:
                tally.add_error("HTTP %d" % response.status)
        if response.status == 503 and retry_after is not None:
            time.sleep(min(float(retry_after), max(0.0, stop_at - time.monotonic())))


def _health(url: str, stop_at: float, samples: List[float], failures: List[str]) -> None:
    parsed = urllib.parse.urlsplit(url)
    while time.monotonic() < stop_at:
        started = time.monotonic()
        try:
            connection = http.client.HTTPConnection(parsed.netloc, timeout=5)
            connection.request("GET", parsed.path)
            response = connection.getresponse()
            body = response.read()
            connection.close()
            if response.status != 200 or b'"UP"' not in body:
                failures.append("HTTP %d" % response.status)
        except (OSError, http.client.HTTPException) as error:
            failures.append(type(error).__name__)
        samples.append((time.monotonic() - started) * 1000)
        time.sleep(0.5)


def _percentile(values: List[float], fraction: float) -> Optional[float]:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(fraction * len(ordered)))], 1)


def _scrape(base_url: str) -> Optional[List[server_metrics.Sample]]:
    try:
        return server_metrics.scrape(base_url.rstrip("/") + "/actuator/prometheus")
    except MetricsError:
        return None


def server_shed_ms(
    path: str, before: Optional[List[server_metrics.Sample]], after: Optional[List[server_metrics.Sample]]
) -> Optional[Dict]:
    """The aggregator's 503 answers on the path between two scrapes: how many, and the histogram bucket
    bounds that hold half and 99 % of them (so 'p99_at_most' 50.3 means 99 % took 50.3 ms or less)."""
    if before is None or after is None:
        return None
    labels = {"uri": "/%s/{n}" % path.strip("/"), "status": "503"}

    def delta(name: str, **more: str) -> float:
        return server_metrics.total(after, name, **labels, **more) - server_metrics.total(
            before, name, **labels, **more
        )

    count = delta("http_server_requests_seconds_count")
    if count <= 0:
        return {"count": 0, "p50_at_most": None, "p99_at_most": None}
    bounds = sorted(
        {
            s.labels["le"]
            for s in after
            if s.name == "http_server_requests_seconds_bucket"
            and s.labels.get("uri") == labels["uri"]
            and s.labels.get("status") == "503"
            and s.labels.get("le") != "+Inf"
        },
        key=float,
    )

    def at_most(fraction: float) -> Optional[float]:
        for bound in bounds:
            if delta("http_server_requests_seconds_bucket", le=bound) >= fraction * count:
                return round(float(bound) * 1000, 1)
        return None

    return {"count": int(round(count)), "p50_at_most": at_most(0.5), "p99_at_most": at_most(0.99)}


def run(base_url: str, path: str, n: int, clients: int, duration_s: float, timeout_s: float = 120) -> Dict:
    """Runs the overload and returns its figures (goodput in correct answers per second)."""
    url = urllib.parse.urlsplit("%s/%s/%d" % (base_url.rstrip("/"), path.strip("/"), n))
    metrics_before = _scrape(base_url)
    expected = expected_body(n)
    tally, lock = Tally(), threading.Lock()
    started = time.monotonic()
    stop_at = started + duration_s
    health_ms: List[float] = []
    health_failures: List[str] = []
    threads = [
        threading.Thread(target=_client, args=(url, expected, stop_at, timeout_s, tally, lock), daemon=True)
        for _ in range(clients)
    ]
    threads.append(
        threading.Thread(
            target=_health,
            args=(base_url.rstrip("/") + "/actuator/health", stop_at, health_ms, health_failures),
            daemon=True,
        )
    )
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=duration_s + timeout_s + 10)
    elapsed = time.monotonic() - started
    server_shed = server_shed_ms(path, metrics_before, _scrape(base_url))
    return {
        "path": path,
        "n": n,
        "clients": clients,
        "duration_s": round(elapsed, 1),
        "goodput_rps": round(tally.correct / elapsed, 2),
        "correct": tally.correct,
        "wrong": tally.wrong,
        "shed": tally.shed,
        "errors": tally.errors,
        "answer_ms": {
            "p50": _percentile(tally.answer_ms, 0.5),
            "p99": _percentile(tally.answer_ms, 0.99),
            "max": _percentile(tally.answer_ms, 1.0),
        },
        "shed_ms": {
            "p50": _percentile(tally.shed_ms, 0.5),
            "p99": _percentile(tally.shed_ms, 0.99),
            "max": _percentile(tally.shed_ms, 1.0),
        },
        "server_shed_ms": server_shed,
        "health": {
            "checks": len(health_ms),
            "failures": len(health_failures),
            "p50_ms": _percentile(health_ms, 0.5),
            "max_ms": _percentile(health_ms, 1.0),
            "median_ms": round(statistics.median(health_ms), 1) if health_ms else None,
        },
    }


def main(argv=None) -> int:
    import argparse

    parser = argparse.ArgumentParser(
        prog="python3 -m lab.overload", description="Goodput of one path under many clients that honour Retry-After"
    )
    parser.add_argument("--url", default="http://127.0.0.1:8080", help="the aggregator")
    parser.add_argument("--paths", default=catalogue.DEFAULT)
    parser.add_argument("--n", type=int, default=20000)
    parser.add_argument("--clients", default="4 200", help="client counts, each run in turn per path")
    parser.add_argument("--duration", type=float, default=60, help="seconds per run")
    args = parser.parse_args(argv)
    rows = []
    for path in args.paths.split():
        for clients in (int(c) for c in args.clients.split()):
            print("  measuring: %s n=%d with %d clients for %gs" % (path, args.n, clients, args.duration), flush=True)
            rows.append(run(args.url, path, args.n, clients, args.duration))
            print(json.dumps(rows[-1]), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
