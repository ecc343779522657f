"""Plain HTTP checks of the services: free ports before start, health after, correct answers before measuring."""

import socket
import subprocess
import urllib.error
import urllib.request
from typing import Dict, Iterable, List, NamedTuple, Optional, Sequence, Tuple

from ..core.catalogue import Path
from ..core.errors import LabError
from ..host import cpu
from ..host.processes import wait_until


def port_taken(port: int, host: str = "127.0.0.1") -> bool:
    """True when something already listens on the port, so a service could not bind it.

    SO_REUSEADDR makes the test ignore sockets in TIME_WAIT, which a previous run leaves behind by the
    thousand (ab closes every connection) and which do not stop a server from binding.
    """
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError:
            return True
    return False


def holder(port: int) -> str:
    """Which process holds a port, when ss can tell."""
    try:
        out = subprocess.run(
            ["ss", "-Hltnp", "sport = :%d" % port], capture_output=True, text=True, timeout=5
        ).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return " Held by: %s" % out.split("users:", 1)[-1] if "users:" in out else ""


def refuse_taken(ports: Sequence[int], why: str) -> None:
    """Raises LabError naming the first port something already listens on, why it is needed, and who holds it."""
    taken = [port for port in ports if port_taken(port)]
    if taken:
        raise LabError("port %d is in use: %s%s" % (taken[0], why, holder(taken[0])))


def wait_answering(urls: Sequence[str], pids: Dict[str, int], timeout_s: float, who: str) -> None:
    """Waits until every URL answers 200, for services without a health endpoint (the article's); raises LabError as
    soon as one of the services has exited, or when the time is up."""

    def ready() -> bool:
        dead = [service for service, pid in pids.items() if not cpu.alive(pid)]
        if dead:
            raise LabError("%s's %s exited while starting: see its log" % (who, dead[0]))
        try:
            return all(get(url, 5.0)[0] == 200 for url in urls)
        except (OSError, ValueError):
            return False

    if not wait_until(ready, timeout_s, 1.0):
        raise LabError("%s did not answer %s within %d s" % (who, ", ".join(urls), timeout_s))


def get(url: str, timeout_s: float) -> Tuple[int, str, str]:
    """(status, content type, body) of a GET; HTTP errors are answers too."""
    try:
        with urllib.request.urlopen(url, timeout=timeout_s) as response:
            return response.status, response.headers.get("Content-Type", ""), response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.headers.get("Content-Type", ""), error.read().decode(errors="replace")


def is_healthy(url: str) -> bool:
    try:
        status, _, body = get(url, timeout_s=2)
    except (OSError, ValueError):
        return False
    return status == 200 and '"status":"UP"' in body.replace(" ", "")


class Unhealthy(NamedTuple):
    service: str
    message: str


def wait_healthy(services: Iterable[Tuple[str, int, str]], timeout_s: float, alive=cpu.alive) -> Optional[Unhealthy]:
    """Waits until every (name, pid, health URL) answers UP; returns None, or the first that did not."""
    pending = list(services)
    exited: List[Unhealthy] = []

    def all_up() -> bool:
        for service in list(pending):
            name, pid, url = service
            if not alive(pid):
                exited.append(Unhealthy(name, "%s (pid %d) exited during start-up" % (name, pid)))
                return True
            if is_healthy(url):
                pending.remove(service)
        return not pending

    if not wait_until(all_up, timeout_s, 0.5):
        name, _, url = pending[0]
        return Unhealthy(name, "%s did not answer UP at %s within %d s" % (name, url, timeout_s))
    return exited[0] if exited else None


def answer_mismatch(path: Path, url: str, n: int, timeout_s: float) -> Optional[str]:
    """Checks one answer against the exact expected body; returns None, or what is wrong with it."""
    try:
        status, content_type, body = get(url, timeout_s)
    except (OSError, ValueError) as error:
        return "GET %s failed: %s" % (url, error)
    problems: List[str] = []
    if status != 200:
        problems.append("status %d, expected 200" % status)
    if not content_type.startswith("application/json"):
        problems.append("Content-Type %r, expected application/json" % content_type)
    expected = path.expected_body(n)
    if body != expected:
        problems.append(
            "body differs from the expected one at character %d: got %r, expected %r"
            % _first_difference(body, expected)
        )
    return "GET %s: %s" % (url, "; ".join(problems)) if problems else None


def payload_shapes_unknown(url: str, timeout_s: float) -> Optional[str]:
    """Asks a path for a payload shape no aggregator knows: one that knows the shapes refuses it with 400. One from
    before them ignores the query and answers the squares, and would then be measured with the article's small call
    under every shape's name. None, or what is wrong."""
    try:
        status, _, body = get(url, timeout_s)
    except (OSError, ValueError) as error:
        return "GET %s failed: %s" % (url, error)
    if status == 400 and "payload" in body:
        return None
    return (
        "GET %s answered %d, not 400 naming the payload shapes: this aggregator does not know them (a jar from "
        "before PAYLOAD?), so every shape would be measured as the small call; rebuild it" % (url, status)
    )


def _first_difference(got: str, expected: str) -> Tuple[int, str, str]:
    index = next((i for i, (a, b) in enumerate(zip(got, expected)) if a != b), min(len(got), len(expected)))
    start = max(0, index - 20)
    return index, got[start : index + 40], expected[start : index + 40]
