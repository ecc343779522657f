"""A health check beside a measured run, as an orchestrator's probe makes it: a new connection every 250 ms to a
/actuator/health URL, each answer timed; a check that fails (not a 200 saying UP, no answer within the timeout) is
kept with its reason.
"""

import http.client
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from typing import Dict, List, Optional

from ..core import repeats

INTERVAL_S = 0.25
# A check that waits this long is a failure, not only a slow one.
TIMEOUT_S = 10.0


@dataclass(frozen=True)
class Check:
    """One health check: when it was sent (s from the probe's start), how long it took, and why it failed (None:
    a 200 saying UP)."""

    sent_s: float
    ms: float
    failure: Optional[str] = None


@dataclass
class HealthProbe:
    """Polls url in a thread of its own, from start() to stop()."""

    url: str
    interval_s: float = INTERVAL_S
    timeout_s: float = TIMEOUT_S
    checks: List[Check] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, name="health " + self.url, daemon=True)

    def start(self) -> "HealthProbe":
        self._thread.start()
        return self

    def stop(self) -> List[Check]:
        self._stop.set()
        self._thread.join(self.timeout_s + 5)
        return list(self.checks)

    def _poll(self) -> None:
        origin = time.monotonic()
        due = origin
        while not self._stop.is_set():
            started = time.monotonic()
            failure = check(self.url, self.timeout_s)
            self.checks.append(
                Check(round(started - origin, 3), round((time.monotonic() - started) * 1000, 1), failure)
            )
            # Every interval_s, or at once after a check that took longer: never two at a time.
            due = max(due + self.interval_s, time.monotonic())
            self._stop.wait(due - time.monotonic())


def check(url: str, timeout_s: float) -> Optional[str]:
    """One GET on a new connection; None when it answered 200 with status UP, else why not."""
    parsed = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(parsed.netloc, timeout=timeout_s)
    try:
        connection.request("GET", parsed.path or "/", headers={"Connection": "close"})
        response = connection.getresponse()
        body = response.read()
    except (OSError, http.client.HTTPException) as error:
        return "%s: %s" % (type(error).__name__, error)
    finally:
        connection.close()
    if response.status != 200:
        return "HTTP %d" % response.status
    if b'"status":"UP"' not in body.replace(b" ", b""):
        return "200 without status UP"
    return None


def figures(url: str, checks: List[Check], limit_ms: float) -> Dict:
    """A probe's record: its checks, failures (each reason with its count and first time), max and p99 ms, and how
    many took longer than limit_ms."""
    times = [c.ms for c in checks]
    failures = [c for c in checks if c.failure]
    reasons: Dict[str, Dict] = {}
    for failed in failures:
        assert failed.failure is not None
        reasons.setdefault(failed.failure, {"count": 0, "first_s": failed.sent_s})["count"] += 1
    return {
        "url": url,
        "checks": len(checks),
        "failures": len(failures),
        "failure_reasons": reasons,
        "max_ms": max(times) if times else None,
        "p99_ms": repeats.percentile(times, 99),
        "over_limit": sum(1 for ms in times if ms > limit_ms),
        "limit_ms": limit_ms,
    }
