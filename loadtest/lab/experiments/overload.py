"""Overload: many clients that honour Retry-After, against each path, for a fixed time (loadtest/run.sh --overload).

ab cannot do this: it never waits when told to, so it measures how fast a 503 comes back rather than how much correct
work gets done. Here each client (lab.load.client) loops: GET, check the body against the exact expected answer, and
on a 503 with Retry-After sleep that long before asking again. Health is polled beside it. The figure that matters is
goodput: correct answers per second. Beside the clients' own timing of a shed (which on one machine includes waiting
for the CPU the clients share with the services), the aggregator's own histogram of its 503 answers says how long a
shed took inside it. It starts the services as the lab does, on the lab's ports, and writes overload.json and
overload.md; it exits 1 when an answer was neither the exact squares nor a shed, or a health check failed.
"""

import argparse
import time
from typing import Dict, List, Optional

from ..core import catalogue, metrics, repeats
from ..core.errors import MetricsError
from ..load import client
from ..load.health_probe import HealthProbe
from ..results import results
from ..stage.deadlines import Deadlines
from . import base


def expected_body(n: int) -> bytes:
    return catalogue.ALL["rest/unary"].expected_body(n).encode()


class Overload(base.Experiment):
    name = "overload"
    about = (
        "Goodput of each path under many clients that honour Retry-After, health polled beside them; exits 1 when an "
        "answer was neither the exact squares nor a shed with Retry-After, or a health check failed"
    )
    document = "overload.json"
    summary = "overload.md.j2"
    prefix = "overload-"

    @classmethod
    def add_options(cls, parser: argparse.ArgumentParser) -> None:
        base.paths_option(parser, help="the aggregator paths, one after the other")
        parser.add_argument("--n", type=int, default=20000, help="squares per request")
        parser.add_argument("--clients", default="4 200", help="client counts, each run in turn per path")
        parser.add_argument("--duration", type=float, default=60, help="seconds per run")
        parser.add_argument("--deadline", type=int, default=30, help="the aggregator's aggregator.deadline, seconds")

    @classmethod
    def checked(cls, options: argparse.Namespace, error) -> None:
        options.path_names = base.path_names(options, error)
        options.client_counts = base.whole_numbers(options.clients, "--clients", error)
        if options.n < 1 or options.duration <= 0 or options.deadline < 1:
            error("--n and --deadline must be at least 1 and --duration more than 0")

    def measure(self, out: str) -> Dict:
        options = self.options
        settings = base.lab_settings(
            network=[catalogue.LOOPBACK], floor=False, tls=[catalogue.PLAINTEXT], paths=options.path_names
        )
        prepared = base.prepare(settings, options.path_names)
        rows: List[Dict] = []
        record = {
            "environment": prepared.describe(),
            "settings": {
                "paths": options.path_names,
                "n": options.n,
                "clients": options.client_counts,
                "duration_s": options.duration,
                "deadline_s": options.deadline,
                "java_opts": settings.java_opts,
                "aggregator_args": settings.aggregator_args,
                "stack": prepared.stack.label,
            },
            "started_at": results.now(),
            "rows": rows,
        }
        deadlines = Deadlines(options.deadline, None, options.deadline + 60, "--deadline of the overload run")
        with base.services_up(prepared, out, deadlines) as (_, started):
            base_url = base.aggregator_of(started).base_url or ""
            for path in options.path_names:
                for clients in options.client_counts:
                    print("[lab] %s n=%d: %d clients for %g s" % (path, options.n, clients, options.duration))
                    rows.append(run(base_url, path, options.n, clients, options.duration))
        return record

    def checks(self, record: Dict) -> Dict[str, List[str]]:
        rows = record["rows"]
        return {
            "only_exact_or_shed": [
                "%s with %d clients: %d wrong answers, other answers %s"
                % (row["path"], row["clients"], row["wrong"], row["errors"])
                for row in rows
                if row["wrong"] or row["errors"]
            ],
            "health_answers": [
                "%s with %d clients: %d of %d health checks failed"
                % (row["path"], row["clients"], row["health"]["failures"], row["health"]["checks"])
                for row in rows
                if row["health"]["failures"]
            ],
        }


main = Overload.main


def run(base_url: str, path: str, n: int, clients: int, duration_s: float, timeout_s: float = 120) -> Dict:
    """Runs the overload on one path and returns its figures (goodput in correct answers per second)."""
    metrics_before = _scrape(base_url)
    load = client.Load(base_url, [path], n, clients, timeout_s, most_retry_after_s=None)
    probe = HealthProbe(base_url.rstrip("/") + "/actuator/health", interval_s=0.5, timeout_s=5)
    started = time.monotonic()
    load.start()
    probe.start()
    time.sleep(duration_s)
    load.stop()
    checks = probe.stop()
    elapsed = time.monotonic() - started
    answers = load.answers
    correct = [a for a in answers if a.kind == client.OK]
    shed = [a for a in answers if a.kind == client.UNAVAILABLE]
    errors: Dict[str, int] = {}
    for answer in answers:
        if answer.kind not in (client.OK, client.UNAVAILABLE, client.WRONG):
            errors[answer.detail or answer.kind] = errors.get(answer.detail or answer.kind, 0) + 1
    health_ms = [check.ms for check in checks]
    return {
        "path": path,
        "n": n,
        "clients": clients,
        "duration_s": round(elapsed, 1),
        "goodput_rps": round(len(correct) / elapsed, 2),
        "correct": len(correct),
        "wrong": sum(1 for a in answers if a.kind == client.WRONG),
        "shed": len(shed),
        "errors": errors,
        "answer_ms": _times([a.seconds for a in correct]),
        "shed_ms": _times([a.seconds for a in shed]),
        "server_shed_ms": server_shed_ms(path, metrics_before, _scrape(base_url)),
        "health": {
            "checks": len(checks),
            "failures": sum(1 for check in checks if check.failure),
            "p50_ms": repeats.percentile(health_ms, 50),
            "max_ms": max(health_ms) if health_ms else None,
        },
    }


def _times(seconds: List[float]) -> Dict[str, Optional[float]]:
    ms = [second * 1000 for second in seconds]
    return {key: _round(repeats.percentile(ms, percent)) for key, percent in (("p50", 50), ("p99", 99), ("max", 100))}


def _round(value: Optional[float]) -> Optional[float]:
    return None if value is None else round(value, 1)


def _scrape(base_url: str) -> Optional[List[metrics.Sample]]:
    try:
        return metrics.scrape(base_url.rstrip("/") + "/actuator/prometheus")
    except MetricsError:
        return None


def server_shed_ms(
    path: str, before: Optional[List[metrics.Sample]], after: Optional[List[metrics.Sample]]
) -> Optional[Dict]:
    """The aggregator's 503 answers on the path between two scrapes: how many, and the histogram bucket
    bounds that hold half and 99 % of them (so 'p99_at_most' 50.3 means 99 % took 50.3 ms or less)."""
    if before is None or after is None:
        return None
    labels = {"uri": "/%s/{n}" % path.strip("/"), "status": "503"}

    def delta(name: str, **more: str) -> float:
        return metrics.total(after, name, **labels, **more) - metrics.total(before, name, **labels, **more)

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
