"""What runs while the lab measures: the square services, started once; on a NETWORK other than loopback, Toxiproxy
with a proxy for each square-service replica; and one aggregator per network, started for that network's runs and
stopped after them, because where it calls the square services (directly, or through the proxies) and its
deadlines are its start-up arguments.
"""

import contextlib
import json
import os
import subprocess
import urllib.request
from typing import Dict, Iterator, List, Mapping, Optional

from ..core import catalogue
from ..core.catalogue import AGGREGATOR, ALL, PROXY, services_needed
from ..core.errors import LabError, TrafficError
from ..core.settings import Settings
from ..host import hosts, traffic
from ..host.processes import Processes, Watched, java_command, log_tail
from ..load import http_check
from . import network, services, tls
from .deadlines import Deadlines
from .stacks import Stack, not_running


class Stage:
    """The lab's running processes, and the services a measured run sees."""

    def __init__(
        self,
        processes: Processes,
        settings: Settings,
        instances: List[services.Instance],
        jars: Dict[str, str],
        results_dir: str,
    ) -> None:
        self.processes = processes
        self.settings = settings
        self.squares = [i for i in instances if i.module != AGGREGATOR]
        # The run's TLS certificates, while a stack uses TLS (lab.stage.tls.certificates).
        self.certificates: Optional[tls.Certificates] = None
        self.has_aggregator = any(i.module == AGGREGATOR for i in instances)
        self.jars = jars
        self.results_dir = results_dir
        self._stack: Optional[Stack] = None
        self.log_suffix = ""
        # The aggregator of the network being measured, None while none runs (a stack of rest/square alone).
        self.aggregator_instance: Optional[services.Instance] = None
        self.square_services: List[services.Service] = []
        self._square_children: List[subprocess.Popen] = []
        self.toxiproxy: Optional[network.Toxiproxy] = None
        self.routes: List[services.Route] = []
        # The square services' own host, while a network needs one (NETWORK=hosts, lab.hosts).
        self.hosts: Optional[hosts.Hosts] = None

    @property
    def stack(self) -> Stack:
        """The stack whose square services run; start_squares sets it."""
        if self._stack is None:
            raise LabError("no stack yet: start the square services first")
        return self._stack

    @property
    def proxy(self) -> network.Toxiproxy:
        """The Toxiproxy between the aggregator and the square services; start_proxy sets it."""
        if self.toxiproxy is None:
            raise LabError("no Toxiproxy: the networks measured are all direct")
        return self.toxiproxy

    def start_squares(self, stack: Stack, log_suffix: str = "") -> None:
        """The square services a stack's paths need, on that stack; each network's aggregator runs on it too. Their
        logs, and the aggregators', end in log_suffix."""
        self._stack, self.log_suffix = stack, log_suffix
        group = self._needed(self.on_stack())
        if self.toxiproxy:
            # Under TLS the REST square service serves on another port: each proxy leads to where its replica serves.
            self.routes = services.proxy_routes(self.settings, self.on_stack())
            for route in self.routes:
                self.proxy.set_upstream(route.name, route.upstream)
        self._square_children = self._start(group, log_suffix)
        self.square_services = _grouped(group, self._square_children, self._logs(group, log_suffix))

    def on_stack(self, host: str = services.LOOPBACK_ADDRESS) -> List[services.Instance]:
        """The square services as the current stack runs them (lab.stage.services.on_tls), on loopback or on another
        host's
        address (lab.stage.services.on_host)."""
        return [
            services.on_tls(self.settings, services.on_host(self.settings, instance, host), self.stack.tls)
            for instance in self.squares
        ]

    def _needed(self, squares: List[services.Instance]) -> List[services.Instance]:
        """The square services the current stack's paths call."""
        needed = services_needed(ALL[name] for name in self.stack.paths)
        return [instance for instance in squares if instance.module in needed]

    def tls_details(self) -> Dict:
        """The current stack's TLS: its mode, and per transport of the aggregator's what the square service it calls
        negotiates (lab.stage.tls.negotiated) and says of its TLS provider (GET /actuator/info, "tls"); {} in
        plaintext."""
        if self.stack.tls == catalogue.PLAINTEXT:
            return {}
        first = {i.module: i for i in self.on_stack() if i.replica == 1}
        measured = {tls.transport_of(name) for name in self.stack.paths if ALL[name].target == AGGREGATOR}
        found: Dict = {"mode": self.stack.tls, "squares": {}}
        for transport, module in tls.TRANSPORTS.items():
            if transport in measured:
                said = _info(first[module].actuator + "/info").get("tls") or {}
                found["squares"][transport] = dict(
                    tls.negotiated(self.stack.tls, transport, first[module].serving_port, self.certificates),
                    service=module,
                    mode=said.get("mode"),
                    provider=said.get("provider"),
                )
        if self.toxiproxy:
            found["proxies"] = {route.name: route.upstream for route in self.routes}
        return found

    def stop_squares(self) -> None:
        self.processes.stop(self._square_children)
        self._square_children, self.square_services = [], []

    def start_proxy(self, binary: str) -> None:
        """Toxiproxy, and a proxy for each square-service replica (no toxics yet)."""
        self.routes = services.proxy_routes(self.settings, self.squares)
        log_path = os.path.join(self.results_dir, "logs", "toxiproxy.log")
        print(
            "[lab] starting Toxiproxy on 127.0.0.1:%d (log: %s)" % (self.settings.toxiproxy_port, log_path), flush=True
        )
        self.toxiproxy = network.Toxiproxy(binary, self.settings.toxiproxy_port, log_path)
        self.proxy.start(self.processes)
        for route in self.routes:
            self.proxy.add_proxy(route.name, route.listen_port, route.upstream)

    @contextlib.contextmanager
    def aggregator_on(self, profile: catalogue.Profile, deadlines: Deadlines) -> Iterator[List[services.Service]]:
        """The services of one network's runs: the aggregator started for it (none for rest/square alone), pointed
        at the proxies with the profile's toxics or at the services; stopped on the way out."""
        proxies = None
        if profile.proxied:
            self.proxy.apply(profile)
            proxies = {route.name: "127.0.0.1:%d" % route.listen_port for route in self.routes}
        started = list(self.square_services)
        children: List[subprocess.Popen] = []
        squares = self.on_stack()
        suffix = ("" if profile.name == catalogue.LOOPBACK else "-" + profile.name) + self.log_suffix
        if profile.apart:
            # The stack's square services again, on their own host, for this network's runs only: those on loopback
            # stay up, idle, for the networks after it.
            found = self._hosts()
            squares = self.on_stack(found.squares_address)
            group = self._needed(squares)
            children = self._start(group, suffix)
            started = _grouped(group, children, self._logs(group, suffix), found.namespace)
        self.aggregator_instance = None
        if self.has_aggregator and any(ALL[name].target == AGGREGATOR for name in self.stack.paths):
            instance = services.aggregator(self.settings, squares, proxies, deadlines, self.stack.tls)
            print("[lab] network %s: %s" % (profile.name, profile.description), flush=True)
            # One log per network: loopback's keeps the name it always had.
            aggregator = self._start([instance], suffix)
            children += aggregator
            started += _grouped([instance], aggregator, self._logs([instance], suffix))
            self.aggregator_instance = instance
        if profile.proxied:
            # The proxy is a process of these runs: its CPU and memory beside the services'.
            started.append(services.Service(PROXY, [self.proxy.pid], None))
        try:
            yield started
        finally:
            if profile.proxied:
                self.connection_totals = self._connection_totals()
            self.processes.stop(children)

    def _hosts(self) -> hosts.Hosts:
        if self.hosts is None:
            raise LabError("NETWORK=hosts without the square services' namespace")
        return self.hosts

    def aggregator_info(self) -> Optional[Dict]:
        """The running aggregator's own account of its settings (GET /actuator/info, under "aggregator")."""
        if self.aggregator_instance is None:
            return None
        return _info(self.aggregator_instance.actuator + "/info")

    def bytes_cross_check(self, counted_before: Dict[str, Dict[str, int]]) -> Dict:
        """Per proxy, once the aggregator of a network stopped: the bytes Toxiproxy passed on (it counts a connection
        as it closes: its totals less those after the network before), beside what the replica's connections
        received and sent (read just before the aggregator stopped), as lab.host.traffic counts a run's. Both hold every
        call of the network, its pre-check and warm-ups too."""
        totals = self.proxy.bytes()
        record = {}
        for route in self.routes:
            passed = totals.get(route.name, {})
            before = counted_before.get(route.name, {})
            record[route.name] = {
                "proxy_upstream": passed.get("upstream", 0) - before.get("upstream", 0),
                "proxy_downstream": passed.get("downstream", 0) - before.get("downstream", 0),
                "service_received": self.connection_totals[route.name]["received"],
                "service_sent": self.connection_totals[route.name]["sent"],
            }
        return {"by_proxy": record, "totals": totals}

    def _connection_totals(self) -> Dict[str, Mapping[str, Optional[int]]]:
        """What each square-service replica's connections on its serving port received and sent, all told."""
        try:
            return {
                route.name: traffic.totals(traffic.read_connections([route.upstream_port])) for route in self.routes
            }
        except TrafficError:
            return {route.name: {"received": None, "sent": None} for route in self.routes}

    def _start(self, group: List[services.Instance], log_suffix: str = "") -> List[subprocess.Popen]:
        """Starts a group of services and waits until each answers UP."""
        children, waiting = [], []
        for instance in group:
            log_path = self._log_path(instance.name + log_suffix)
            print("[lab] starting %s (log: %s)" % (instance.name, log_path), flush=True)
            command = java_command(
                self.stack.jdk.java,
                " ".join(
                    [self.settings.java_opts]
                    + tls.jvm_options(self.stack.tls, self.settings.tls_provider, instance.module)
                ),
                self.jars[self.stack.module(instance.module)],
                self.stack.adapted(
                    instance.arguments
                    + self.stack.arguments(instance.module)
                    + tls.arguments(self.stack.tls, instance.module, self.certificates)
                ),
            )
            if instance.host != services.LOOPBACK_ADDRESS:
                command = self._hosts().command(command)
            child = self.processes.start(command, log_path=log_path, side="services")
            children.append(child)
            waiting.append((instance.name, child.pid, instance.actuator + "/health"))
        print(
            "[lab] waiting up to %ds for %s to be healthy"
            % (self.settings.health_timeout_s, " ".join(name for name, _, _ in waiting)),
            flush=True,
        )
        problem = http_check.wait_healthy(waiting, self.settings.health_timeout_s)
        if problem:
            log_file = self._log_path(problem.service + log_suffix)
            raise LabError(
                "%s\n[lab] the end of %s:\n%s%s"
                % (
                    problem.message,
                    log_file,
                    "\n".join(line.strip() for line in log_tail(log_file, 40)),
                    "\n[lab] on a busy machine, give them longer with HEALTH_TIMEOUT (now %d s)"
                    % self.settings.health_timeout_s,
                )
            )
        wrong = [
            found
            for instance in group
            for found in not_running(self.stack, instance.module, _info(instance.actuator + "/info"))
        ]
        if wrong:
            raise LabError(
                "a service does not run the stack asked for, so the lab measures nothing:\n  " + "\n  ".join(wrong)
            )
        return children

    def _log_path(self, name: str) -> str:
        return os.path.join(self.results_dir, "logs", name + ".log")

    def _logs(self, group: List[services.Instance], log_suffix: str) -> List[str]:
        return [self._log_path(instance.name + log_suffix) for instance in group]


def _info(url: str) -> Dict:
    """A service's GET /actuator/info document."""
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return json.load(response)
    except (OSError, ValueError) as error:
        raise LabError("cannot read %s: %s" % (url, error)) from None


def _grouped(
    instances: List[services.Instance],
    children: List[subprocess.Popen],
    logs: List[str],
    namespace: Optional[str] = None,
) -> List[services.Service]:
    """The running services, a module's replicas grouped, with where each serves its calls and, to check that they
    still run, their processes and logs."""
    by_module: Dict[str, List] = {}
    for instance, child, log in zip(instances, children, logs):
        by_module.setdefault(instance.module, []).append((instance, child, log))
    return [
        services.Service(
            module,
            [child.pid for _, child, _ in group],
            group[0][0].base_url,
            [instance.actuator + "/prometheus" for instance, _, _ in group],
            [instance.serving_port for instance, _, _ in group],
            [Watched(instance.name, child, log) for instance, child, log in group],
            namespace,
        )
        for module, group in by_module.items()
    ]
