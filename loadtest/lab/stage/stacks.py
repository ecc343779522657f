"""The software stacks a lab run measures (SPRING, REST_SERVER, REST_CLIENT, JAVA_HOMES, VIRTUAL_THREADS, TLS): which
Spring generation the services are built on, which server serves the REST square service, which connector the
aggregator calls it with, which JDK every service runs on, whether their request threads are virtual, and whether the
aggregator's calls to the square services are encrypted.

Each stack has its services started for it and stopped after it, as a network has its aggregator. The first stack
measures every path; one that differs from it only in the REST server or client measures the REST paths it changes; one
in another TLS mode, those of them that go through the aggregator.
"""

import os
import re
import subprocess
from dataclasses import dataclass
from typing import Dict, List

from ..core.catalogue import (
    AGGREGATOR,
    ALL,
    DEFAULT_SPRING,
    HTTP1_ONLY_CLIENTS,
    PLAINTEXT,
    SQUARE_REST,
    TLS_NAMES,
    module_of,
)
from ..core.errors import SettingsError
from ..core.settings import Settings

# net.devh's gRPC server settings as Spring gRPC names them, for the lab's own arguments (lab.stage.services, .tls).
GRPC_SERVER_WORDS = {
    "--grpc.server.port": "--spring.grpc.server.port",
    "--grpc.server.address": "--spring.grpc.server.address",
}
_GRPC_BUNDLE = "--spring.ssl.bundle.pem.grpc."
GRPC_TLS_WORDS = {
    "--grpc.server.security.enabled": lambda value: "--spring.grpc.server.ssl.bundle=grpc",
    "--grpc.server.security.certificate-chain": lambda value: _GRPC_BUNDLE + "keystore.certificate=" + _file(value),
    "--grpc.server.security.private-key": lambda value: _GRPC_BUNDLE + "keystore.private-key=" + _file(value),
    "--grpc.server.security.client-auth": lambda value: "--spring.grpc.server.ssl.client-auth=" + value.lower(),
    "--grpc.server.security.trust-cert-collection": lambda value: (
        _GRPC_BUNDLE + "truststore.certificate=" + _file(value)
    ),
}


def _file(value: str) -> str:
    return value[len("file:") :] if value.startswith("file:") else value


# Virtual threads are a JDK 21 feature; Spring Boot ignores spring.threads.virtual.enabled below it.
VIRTUAL_THREADS_JDK = 21
# rest/h2c needs a client that speaks HTTP/2 cleartext with prior knowledge.
H2C = "rest/h2c"


@dataclass(frozen=True)
class Jdk:
    """An installed JDK: its home (empty: the lab's own java), its java executable and its version."""

    home: str
    java: str
    version: str

    @property
    def major(self) -> int:
        found = re.match(r"(1\.)?(\d+)", self.version)
        if not found:
            raise ValueError("not a Java version: %r" % self.version)
        return int(found.group(2))


@dataclass(frozen=True)
class Stack:
    rest_server: str
    rest_client: str
    jdk: Jdk
    virtual_threads: bool
    # The paths measured on it: every path on the first stack, on the others the paths they change.
    paths: tuple
    # The aggregator's calls to the square services: catalogue.TLS_MODES.
    tls: str = PLAINTEXT
    # The Spring generation the services are built on (SPRING).
    spring: str = DEFAULT_SPRING

    @property
    def label(self) -> str:
        """How runs, tables and charts name the stack: "jetty · reactor-netty client · JDK 17", then "· virtual
        threads" and "· TLS" or "· mTLS" when on."""
        threads = " · virtual threads" if self.virtual_threads else ""
        tls = "" if self.tls == PLAINTEXT else " · " + TLS_NAMES[self.tls]
        # Named only off the default, so that every label of a run of one generation stays what it was.
        spring = "" if self.spring == DEFAULT_SPRING else " · Boot " + self.spring
        return "%s · %s client · JDK %d%s%s%s" % (
            self.rest_server,
            self.rest_client,
            self.jdk.major,
            threads,
            tls,
            spring,
        )

    @property
    def slug(self) -> str:
        """The stack in a file name: jetty-reactor-netty-client-jdk-17."""
        return re.sub(r"[^a-z0-9]+", "-", self.label.lower()).strip("-")

    def module(self, module: str) -> str:
        """The Maven module whose jar runs a service on this stack's Spring generation."""
        return module_of(self.spring, module)

    def adapted(self, arguments: List[str]) -> List[str]:
        """A service's arguments in its generation's words: Spring gRPC names the gRPC server's settings otherwise
        (docs/migration-boot4.md), and takes its TLS from an SSL bundle, as the REST service does."""
        if self.spring == DEFAULT_SPRING:
            return arguments
        found = []
        for argument in arguments:
            name, _, value = argument.partition("=")
            if name in GRPC_SERVER_WORDS:
                found.append("%s=%s" % (GRPC_SERVER_WORDS[name], value))
            elif name in GRPC_TLS_WORDS:
                found.append(GRPC_TLS_WORDS[name](value))
            else:
                found.append(argument)
        return found

    def arguments(self, module: str) -> List[str]:
        """The Spring arguments that put a service on this stack."""
        found = []
        if module == SQUARE_REST:
            found.append("--square.server=" + self.rest_server)
        if module == AGGREGATOR:
            found.append("--aggregator.rest.client=" + self.rest_client)
            if self.rest_client not in HTTP1_ONLY_CLIENTS:
                found.append("--aggregator.rest.h2c-client=" + self.rest_client)
        return found + (["--spring.threads.virtual.enabled=true"] if self.virtual_threads else [])

    def as_dict(self) -> Dict:
        return {
            "label": self.label,
            "rest_server": self.rest_server,
            "rest_client": self.rest_client,
            "java_home": self.jdk.home or None,
            "java": self.jdk.java,
            "jdk_version": self.jdk.version,
            "virtual_threads": self.virtual_threads,
            "tls": self.tls,
            "spring": self.spring,
            "paths": list(self.paths),
        }


def resolve(settings: Settings, java: str) -> List[Stack]:
    """Every stack of the settings, each JDK asked for its version; a JAVA_HOMES entry that is not a JDK, or virtual
    threads on a JDK without them, stop the lab here, before it starts anything."""
    jdks = [probe(home, java) for home in settings.java_homes] if settings.java_homes else [probe("", java)]
    if settings.virtual_threads:
        old = [jdk for jdk in jdks if jdk.major < VIRTUAL_THREADS_JDK]
        if old:
            raise SettingsError(
                "VIRTUAL_THREADS=on needs JDK %d or newer, and %s is JDK %s: give JAVA_HOMES only such "
                "JDKs, or VIRTUAL_THREADS=off" % (VIRTUAL_THREADS_JDK, old[0].home or old[0].java, old[0].version)
            )
    rest_paths = [name for name in settings.paths if SQUARE_REST in ALL[name].services]
    client_paths = [name for name in rest_paths if ALL[name].target == AGGREGATOR]
    # TLS is between the aggregator and the square services: the paths through the aggregator.
    hop_paths = [name for name in settings.paths if ALL[name].target == AGGREGATOR]
    for knob, values, needed in (
        ("REST_SERVER", settings.rest_server, rest_paths),
        ("REST_CLIENT", settings.rest_client, client_paths),
        ("TLS", settings.tls, hop_paths),
    ):
        if len(values) > 1 and not needed:
            raise SettingsError(
                "%s lists %s, but PATHS has no path it changes: add rest/unary or rest/h2c, or give "
                "%s one value" % (knob, " ".join(values), knob)
            )
    stacks = []
    for spring in settings.spring:
        stacks += _stacks_of(settings, spring, jdks, rest_paths, client_paths, hop_paths)
    return stacks


def _stacks_of(
    settings: Settings,
    spring: str,
    jdks: List[Jdk],
    rest_paths: List[str],
    client_paths: List[str],
    hop_paths: List[str],
) -> List[Stack]:
    """The stacks of one Spring generation: every path on its first, then what each other choice changes."""
    stacks = []
    for jdk in jdks:
        for tls_index, tls in enumerate(settings.tls):
            for server_index, server in enumerate(settings.rest_server):
                for client_index, client in enumerate(settings.rest_client):
                    if server_index == client_index == 0:
                        chosen = list(settings.paths)
                    else:
                        chosen = rest_paths if server_index else client_paths
                    if tls_index:
                        chosen = [name for name in chosen if name in hop_paths]
                    if client in HTTP1_ONLY_CLIENTS:
                        chosen = [name for name in chosen if name != H2C]
                    if chosen:
                        stacks.append(Stack(server, client, jdk, settings.virtual_threads, tuple(chosen), tls, spring))
    return stacks


def not_running(stack: Stack, module: str, info: Dict) -> List[str]:
    """What a started service says it runs (its /actuator/info) that is not what its stack asked for; a value the
    service does not say is what a jar from before the choice ran: Tomcat, and Reactor Netty's client."""
    asked = {}
    if module == SQUARE_REST:
        asked = {("square", "server"): (stack.rest_server, "tomcat")}
    elif module == AGGREGATOR:
        asked = {("aggregator", "rest-client"): (stack.rest_client, "reactor-netty")}
        if stack.rest_client not in HTTP1_ONLY_CLIENTS:
            asked[("aggregator", "rest-h2c-client")] = (stack.rest_client, "reactor-netty")
    found = []
    # A service in plaintext says no "tls" at all; the aggregator says it among its settings.
    where = "aggregator.tls.mode" if module == AGGREGATOR else "tls.mode"
    said_tls = ((info.get("aggregator") or {}) if module == AGGREGATOR else info).get("tls") or {}
    if said_tls.get("mode", PLAINTEXT) != stack.tls:
        found.append(
            "%s runs tls mode %s, not %s as stack %s asks (GET /actuator/info, %s)"
            % (module, said_tls.get("mode", PLAINTEXT), stack.tls, stack.label, where)
        )
    for (section, name), (wanted, default) in asked.items():
        said = (info.get(section) or {}).get(name, default)
        if said != wanted:
            found.append(
                "%s runs %s=%s, not %s as stack %s asks (GET /actuator/info, %s.%s)"
                % (module, name, said, wanted, stack.label, section, name)
            )
    return found


def probe(home: str, default_java: str) -> Jdk:
    """The JDK in a folder (or, for "", the lab's own java), with the version its java reports."""
    java = os.path.join(home, "bin", "java") if home else default_java
    if home and not (os.path.isfile(java) and os.access(java, os.X_OK)):
        raise SettingsError(
            "JAVA_HOMES: %s is not a JDK (it has no executable bin/java); give the folders of "
            'installed JDKs, e.g. JAVA_HOMES="%s"' % (home, " ".join(installed()) or "/usr/lib/jvm/<jdk>")
        )
    try:
        done = subprocess.run(
            [java, "-XshowSettings:properties", "-version"],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=60,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise SettingsError("JAVA_HOMES: %s does not run: %s" % (java, error)) from None
    match = re.search(r"^\s*java\.version = (\S+)$", done.stdout, re.MULTILINE)
    if done.returncode != 0 or not match:
        raise SettingsError("JAVA_HOMES: %s does not run as a JDK (java -version failed)" % java)
    return Jdk(home, java, match.group(1))


def installed() -> List[str]:
    """The JDK folders under /usr/lib/jvm, for the error that asks for one."""
    root = "/usr/lib/jvm"
    try:
        names = sorted(os.listdir(root))
    except OSError:
        return []
    return [
        os.path.join(root, name)
        for name in names
        if not os.path.islink(os.path.join(root, name)) and os.path.isfile(os.path.join(root, name, "bin", "java"))
    ]
