"""What the monitoring tests share: paths, tools, free ports, HTTP and child processes.

Standard library only, so that the tests need nothing but python3 and the tools they check.
"""

import json
import os
import shutil
import signal
import socket
import subprocess
import time
import unittest
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

MONITORING = Path(__file__).resolve().parents[1]
REPO = MONITORING.parent
RUN_PROMETHEUS = MONITORING / "run-prometheus.sh"
IN_CI = os.environ.get("CI") == "true"
INSTALL_HINT = "install the tools with: monitoring/install-tools.sh (as root)"


def tool(name):
    """The path of a tool, or the test is skipped (failed under CI=true, where every check must run)."""
    found = shutil.which(name) or _local_tool(name)
    if found:
        return found
    message = f"{name} not found; {INSTALL_HINT}"
    if IN_CI:
        raise AssertionError(f"CI=true and {message}")
    raise unittest.SkipTest(message)


def _local_tool(name):
    candidate = MONITORING / ".tools" / "bin" / name
    return str(candidate) if os.access(candidate, os.X_OK) else None


def run(args, timeout=120, **kwargs):
    """Runs a command to its end and returns the CompletedProcess (text output, stdout and stderr apart)."""
    return subprocess.run(args, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL, **kwargs)


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def port_open(port):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(1)
        return s.connect_ex(("127.0.0.1", port)) == 0


def http_get(url, timeout=10):
    """(status, body as text) of a GET; HTTP error statuses are answers, not exceptions."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def prometheus_query(base_url, promql):
    """Instant query through Prometheus's HTTP API; returns the parsed JSON answer (status and data or error)."""
    url = f"{base_url}/api/v1/query?" + urllib.parse.urlencode({"query": promql})
    _, body = http_get(url)
    return json.loads(body)


def wait_until(what, probe, timeout, interval=0.5):
    """Calls probe until it returns a true value, which is returned; raises AssertionError after timeout."""
    deadline = time.monotonic() + timeout
    last = None
    while True:
        last = probe()
        if last:
            return last
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(interval)


def stop_process(process, timeout=30):
    """SIGTERM to the process's own session, then SIGKILL if it is still there after timeout."""
    if process.poll() is not None:
        return
    try:
        os.killpg(process.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    try:
        process.wait(timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(10)


def tail(path, lines=40):
    try:
        return "\n".join(Path(path).read_text(errors="replace").splitlines()[-lines:])
    except OSError as error:
        return f"(no log: {error})"
