"""Simulated networks (NETWORK) between the aggregator and the square services, with Toxiproxy.

On loopback a round trip costs microseconds and CPU decides; across a network every sequential call pays a round
trip. The kernel here has no netem, so the lab puts a real TCP proxy, Toxiproxy, between the aggregator and each
square service, and gives it a latency and a bandwidth toxic in both directions. Toxiproxy's own latency toxic
counts whole milliseconds, which cannot say a LAN's 0.5 ms round trip (250 µs each way), so the lab builds
Toxiproxy's server from its Go module with one more toxic, latency_us (loadtest/toxiproxy, built by lab.tools).

The bandwidth toxic limits each connection on its own: gRPC carries every call on one connection per replica and
so shares one limit, while the REST pools open many connections and get one limit each.
"""

import json
import subprocess
import urllib.error
import urllib.request
from typing import Dict, List, Optional

from prometheus_client.parser import text_string_to_metric_families

from ..core.catalogue import DIRECTIONS, Profile
from ..core.errors import LabError
from ..host.processes import Processes, wait_until


class Toxiproxy:
    """One Toxiproxy server, started under the lab's Processes, and its proxies, driven over its HTTP API."""

    def __init__(self, binary: str, api_port: int, log_path: str) -> None:
        self.binary = binary
        self.api = "http://127.0.0.1:%d" % api_port
        self.api_port = api_port
        self.log_path = log_path
        self._process: Optional[subprocess.Popen] = None
        self._proxies: List[str] = []

    def start(self, processes: Processes, timeout_s: float = 30.0) -> None:
        """Starts the server and waits until its API answers."""
        self._process = processes.start(
            [self.binary, "-host", "127.0.0.1", "-port", str(self.api_port)], log_path=self.log_path, side="services"
        )

        process = self._process

        def answers() -> bool:
            if process.poll() is not None:
                raise LabError(
                    "Toxiproxy exited with code %d before its API answered: see %s"
                    % (process.returncode, self.log_path)
                )
            try:
                self._call("GET", "/version")
                return True
            except OSError:
                return False

        if not wait_until(answers, timeout_s, 0.1):
            raise LabError(
                "Toxiproxy's API did not answer on %s within %d s: see %s" % (self.api, timeout_s, self.log_path)
            )

    @property
    def pid(self) -> int:
        if self._process is None:
            raise LabError("Toxiproxy has not been started")
        return self._process.pid

    def add_proxy(self, name: str, listen_port: int, upstream: str) -> str:
        """A proxy from 127.0.0.1:listen_port to upstream ("host:port"); returns the address to call instead."""
        listen = "127.0.0.1:%d" % listen_port
        self._call("POST", "/proxies", {"name": name, "listen": listen, "upstream": upstream, "enabled": True})
        self._proxies.append(name)
        return listen

    def set_upstream(self, name: str, upstream: str) -> None:
        """Leads an existing proxy to another upstream ("host:port")."""
        self._call("POST", "/proxies/" + name, {"upstream": upstream, "enabled": True})

    def apply(self, profile: Profile) -> None:
        """Replaces the toxics of every proxy with the profile's (none for a bare proxy or loopback)."""
        self.set_toxics(profile.toxics())

    def set_toxics(self, toxics: List[Dict]) -> None:
        """Replaces the toxics of every proxy with these (Toxiproxy's toxic objects); [] removes them all."""
        for name in self._proxies:
            for toxic in self._call("GET", "/proxies/%s/toxics" % name):
                self._call("DELETE", "/proxies/%s/toxics/%s" % (name, toxic["name"]))
            for toxic in toxics:
                self._call("POST", "/proxies/%s/toxics" % name, toxic)

    def toxics(self, name: str) -> List[Dict]:
        """The toxics a proxy has now, as Toxiproxy reports them."""
        return self._call("GET", "/proxies/%s/toxics" % name)

    def bytes(self) -> Dict[str, Dict[str, int]]:
        """Per proxy: the bytes it passed on upstream (aggregator -> service) and downstream. Toxiproxy adds a
        connection's bytes when the connection closes: read them once the aggregator has stopped."""
        with urllib.request.urlopen(self.api + "/metrics", timeout=10) as response:
            return sent_bytes(response.read().decode("utf-8"))

    def _call(self, method: str, path: str, body: Optional[Dict] = None):
        data = json.dumps(body).encode("utf-8") if body is not None else None
        request = urllib.request.Request(
            self.api + path, data=data, method=method, headers={"Content-Type": "application/json"} if data else {}
        )
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                text = response.read().decode("utf-8")
        except urllib.error.HTTPError as error:
            raise LabError(
                "Toxiproxy refused %s %s: HTTP %d %s"
                % (method, path, error.code, error.read().decode("utf-8", "replace").strip())
            ) from None
        return json.loads(text) if text.strip().startswith(("{", "[")) else text


def sent_bytes(metrics_page: str) -> Dict[str, Dict[str, int]]:
    """toxiproxy_proxy_sent_bytes_total by proxy and direction, from Toxiproxy's /metrics page."""
    counts: Dict[str, Dict[str, int]] = {}
    for family in text_string_to_metric_families(metrics_page):
        for sample in family.samples:
            if sample.name == "toxiproxy_proxy_sent_bytes_total":
                proxy = counts.setdefault(sample.labels["proxy"], dict.fromkeys(DIRECTIONS, 0))
                proxy[sample.labels["direction"]] += int(sample.value)
    return counts
