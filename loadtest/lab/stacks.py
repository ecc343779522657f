"""The software stacks a lab run measures (REST_SERVER, JAVA_HOMES, VIRTUAL_THREADS): which Spring server serves the
REST square service, which JDK every service runs on, and whether their request threads are virtual.

Each stack has its services started for it and stopped after it, as a network has its aggregator. The first stack
measures every path; one that differs from it only in the REST server measures the REST paths, the only ones that
server serves.
"""

import os
import re
import subprocess
from dataclasses import dataclass
from typing import Dict, List

from .paths import ALL, SQUARE_REST
from .settings import Settings, SettingsError

# Virtual threads are a JDK 21 feature; Spring Boot ignores spring.threads.virtual.enabled below it.
VIRTUAL_THREADS_JDK = 21


@dataclass(frozen=True)
class Jdk:
    """An installed JDK: its home (empty: the lab's own java), its java executable and its version."""

    home: str
    java: str
    version: str

    @property
    def major(self) -> int:
        return int(re.match(r"(1\.)?(\d+)", self.version).group(2))


@dataclass(frozen=True)
class Stack:
    rest_server: str
    jdk: Jdk
    virtual_threads: bool
    # The paths measured on it: every path on the first stack, the REST ones on a stack that only changes the server.
    paths: tuple

    @property
    def label(self) -> str:
        """How runs, tables and charts name the stack: "jetty · JDK 17", with "· virtual threads" when on."""
        threads = " · virtual threads" if self.virtual_threads else ""
        return "%s · JDK %d%s" % (self.rest_server, self.jdk.major, threads)

    def arguments(self, module: str) -> List[str]:
        """The Spring arguments that put a service on this stack."""
        found = ["--square.server=" + self.rest_server] if module == SQUARE_REST else []
        return found + (["--spring.threads.virtual.enabled=true"] if self.virtual_threads else [])

    def as_dict(self) -> Dict:
        return {"label": self.label, "rest_server": self.rest_server, "java_home": self.jdk.home or None,
                "java": self.jdk.java, "jdk_version": self.jdk.version, "virtual_threads": self.virtual_threads,
                "paths": list(self.paths)}


def resolve(settings: Settings, java: str) -> List[Stack]:
    """Every stack of the settings, each JDK asked for its version; a JAVA_HOMES entry that is not a JDK, or virtual
    threads on a JDK without them, stop the lab here, before it starts anything."""
    jdks = [probe(home, java) for home in settings.java_homes] if settings.java_homes else [probe("", java)]
    if settings.virtual_threads:
        old = [jdk for jdk in jdks if jdk.major < VIRTUAL_THREADS_JDK]
        if old:
            raise SettingsError("VIRTUAL_THREADS=on needs JDK %d or newer, and %s is JDK %s: give JAVA_HOMES only such "
                                "JDKs, or VIRTUAL_THREADS=off" % (VIRTUAL_THREADS_JDK, old[0].home or old[0].java,
                                                                 old[0].version))
    rest_paths = tuple(name for name in settings.paths if SQUARE_REST in ALL[name].services)
    if len(settings.rest_server) > 1 and not rest_paths:
        raise SettingsError("REST_SERVER lists %s, but PATHS has no path that reaches square-rest-service: add "
                            "rest/unary, rest/h2c or rest/square, or give REST_SERVER one server"
                            % " ".join(settings.rest_server))
    stacks = []
    for jdk in jdks:
        for index, server in enumerate(settings.rest_server):
            chosen = tuple(settings.paths) if index == 0 else rest_paths
            stacks.append(Stack(server, jdk, settings.virtual_threads, chosen))
    return stacks


def probe(home: str, default_java: str) -> Jdk:
    """The JDK in a folder (or, for "", the lab's own java), with the version its java reports."""
    java = os.path.join(home, "bin", "java") if home else default_java
    if home and not (os.path.isfile(java) and os.access(java, os.X_OK)):
        raise SettingsError("JAVA_HOMES: %s is not a JDK (it has no executable bin/java); give the folders of "
                            "installed JDKs, e.g. JAVA_HOMES=\"%s\""
                            % (home, " ".join(installed()) or "/usr/lib/jvm/<jdk>"))
    try:
        done = subprocess.run([java, "-XshowSettings:properties", "-version"], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, timeout=60)
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
    return [os.path.join(root, name) for name in names
            if not os.path.islink(os.path.join(root, name)) and os.path.isfile(os.path.join(root, name, "bin", "java"))]
