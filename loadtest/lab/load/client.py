"""The lab's one Python HTTP client: a few clients per path, each on one keep-alive connection, checking every answer
against the exact expected one (classify: the one definition of a good answer), together sending a fixed rate of
requests a second on each path, or each as fast as its answers come (a closed loop). The fault run (a paced steady
load) and the overload (clients that honour Retry-After) both use it.

A paced path's goodput is its rate while it is healthy, whatever its neighbours do: in a closed loop, five paths
sharing two cores traded their shares of the CPU from one second to the next. Every answer is kept (an Answer), so
that the figures of any window of time (before a fault, during it, after it cleared) come from the same record.
"""

import http.client
import json
import threading
import time
import urllib.parse
from dataclasses import dataclass
from typing import List, Optional, Tuple

from ..core import catalogue

# What an answer was: the exact expected 200, a 200 with another body, a 503 or 504 with a problem body, or anything
# else (another status, a 503 or 504 without a problem body, a connection error, no answer within the client's
# timeout).
OK, WRONG, UNAVAILABLE, TIMEOUT, OTHER = "ok", "wrong", "503", "504", "other"
KINDS = (OK, UNAVAILABLE, TIMEOUT, OTHER, WRONG)
PROBLEM_JSON = "application/problem+json"
# A client pauses after an error answer as a real one backs off, so that a fault's fast failures do not turn fifteen
# clients into busy loops that take the CPU the services need to recover.
ERROR_PAUSE_S = 0.05
# The most a client honours a Retry-After: longer would leave a path without load through the next fault.
MOST_RETRY_AFTER_S = 1.0


@dataclass(frozen=True)
class Answer:
    """One request: its path, when it was sent and answered (time.monotonic()), what it was, and why, if not ok."""

    path: str
    sent: float
    answered: float
    kind: str
    detail: str = ""

    @property
    def seconds(self) -> float:
        return self.answered - self.sent


def classify(status: int, content_type: Optional[str], body: bytes, expected: bytes) -> Tuple[str, str]:
    """(kind, detail) of one HTTP answer: detail says what was wrong with an answer that is not ok."""
    if status == 200:
        return (OK, "") if body == expected else (WRONG, "a 200 whose body is not the expected answer")
    if status in (503, 504):
        problem = _problem_status(content_type, body)
        if problem == status:
            return (UNAVAILABLE if status == 503 else TIMEOUT), ""
        return OTHER, "%d without a problem body (%s)" % (status, content_type or "no Content-Type")
    return OTHER, "HTTP %d%s" % (status, _detail(body))


def _detail(body: bytes) -> str:
    """A problem body's detail, after a colon, so that an unexpected status says why; empty without one."""
    try:
        detail = json.loads(body).get("detail")
    except (ValueError, AttributeError):
        return ""
    return ": " + str(detail)[:300] if detail else ""


def _problem_status(content_type: Optional[str], body: bytes) -> Optional[int]:
    """The status an RFC 9457 problem body states, or None when the answer is not one."""
    if not content_type or content_type.split(";")[0].strip().lower() != PROBLEM_JSON:
        return None
    try:
        problem = json.loads(body)
    except ValueError:
        return None
    if not isinstance(problem, dict) or not all(key in problem for key in ("title", "status", "detail")):
        return None
    return problem["status"] if isinstance(problem["status"], int) else None


class Load:
    """clients clients on each path, from start() to stop(), together sending rate requests a second on it (0: each
    as fast as its answers come); their answers in answers."""

    def __init__(
        self,
        base_url: str,
        path_names: List[str],
        n: int,
        clients: int,
        timeout_s: float,
        rate: float = 0.0,
        most_retry_after_s: Optional[float] = MOST_RETRY_AFTER_S,
    ) -> None:
        self.base_url = urllib.parse.urlsplit(base_url)
        self.path_names = path_names
        self.n = n
        self.clients = clients
        self.timeout_s = timeout_s
        # Each client's time between two requests; its turns are spread evenly among the path's clients.
        self.interval_s = clients / rate if rate else 0.0
        # None: a Retry-After honoured whole (the overload's clients), else at most this long.
        self.most_retry_after_s = most_retry_after_s
        # list.append is atomic in CPython: the clients add to it without a lock.
        self.answers: List[Answer] = []
        self._stop = threading.Event()
        self._threads: List[threading.Thread] = []

    def start(self) -> None:
        self._stop.clear()
        self._threads = [
            threading.Thread(target=self._client, args=(name, i), daemon=True, name="fault-load-%s-%d" % (name, i))
            for name in self.path_names
            for i in range(self.clients)
        ]
        for thread in self._threads:
            thread.start()

    def stop(self) -> List[str]:
        """Stops sending and waits for the requests under way; returns the clients still waiting past the timeout,
        which answered nothing (a hang)."""
        self._stop.set()
        give_up = time.monotonic() + self.timeout_s + 5
        for thread in self._threads:
            thread.join(timeout=max(0.0, give_up - time.monotonic()))
        return [thread.name for thread in self._threads if thread.is_alive()]

    def _client(self, name: str, index: int) -> None:
        path = catalogue.ALL[name]
        url_path = path.url_path.format(n=self.n)
        expected = path.expected_body(self.n).encode()
        connection: Optional[http.client.HTTPConnection] = None
        turn = time.monotonic() + self.interval_s * index / self.clients
        while not self._stop.is_set():
            if self.interval_s:
                # A late client does not catch up with a burst: after a slow answer it goes on at its pace.
                if self._stop.wait(max(0.0, turn - time.monotonic())):
                    break
                turn = max(turn, time.monotonic()) + self.interval_s
            if connection is None:
                connection = http.client.HTTPConnection(self.base_url.netloc, timeout=self.timeout_s)
            sent = time.monotonic()
            try:
                connection.request("GET", url_path)
                response = connection.getresponse()
                body = response.read()
            except (OSError, http.client.HTTPException) as error:
                self.answers.append(
                    Answer(name, sent, time.monotonic(), OTHER, "no answer: %s" % (type(error).__name__))
                )
                connection.close()
                connection = None
                self._stop.wait(ERROR_PAUSE_S)
                continue
            kind, detail = classify(response.status, response.getheader("Content-Type"), body, expected)
            self.answers.append(Answer(name, sent, time.monotonic(), kind, detail))
            if kind != OK:
                self._stop.wait(_pause(response.getheader("Retry-After"), self.most_retry_after_s))
        if connection is not None:
            connection.close()


def _pause(retry_after: Optional[str], most_s: Optional[float] = MOST_RETRY_AFTER_S) -> float:
    """How long a client waits after an error answer: what Retry-After asks, at most most_s (None: all of it)."""
    if retry_after is None:
        return ERROR_PAUSE_S
    try:
        asked = max(ERROR_PAUSE_S, float(retry_after))
    except (TypeError, ValueError):
        return ERROR_PAUSE_S
    return asked if most_s is None else min(most_s, asked)
