"""Every tool the lab runs, found or installed in one place: java (found only), ab and ss (apt), Go (found only),
Vegeta and the lab's Toxiproxy (Go, into loadtest/.tools/bin), the services' jars and the report's Chart.js (Maven).

Each is looked for first (on PATH, in .tools/bin, in a module's target/); when missing, installed if the lab can;
else ToolMissing says what is missing and what to run.
"""

import glob
import hashlib
import os
import platform
import re
import shutil
import subprocess
import urllib.request
import zipfile
from typing import Callable, Dict, List, Mapping, Optional

from ..core import catalogue, paths
from ..core.errors import ToolMissing
from ..core.paths import LAB_DIR, REPO

TOOLS_BIN = os.path.join(LAB_DIR, ".tools", "bin")
# Where the official Go archive (go.dev/dl) is unpacked: a shell that never put it on PATH still has it there.
GO_FALLBACK = "/usr/local/go/bin/go"
# The date and time Go's log package puts before each of its tools' error lines.
_GO_LOG_PREFIX = re.compile(r"^\d{4}/\d\d/\d\d \d\d:\d\d:\d\d ")

VEGETA_MODULE = "github.com/tsenart/vegeta/v12"
VEGETA_VERSION = "v12.13.0"

TOXIPROXY_SOURCE = os.path.join(LAB_DIR, "toxiproxy")
TOXIPROXY_BINARY = "toxiproxy-server"
TOXIPROXY_VERSION = "v2.12.0"
# Stamped into the build, so that `-version` says which Toxiproxy it is and that it has latency_us.
TOXIPROXY_STAMP = "%s+latency_us" % TOXIPROXY_VERSION

FETCH_COMMAND = paths.FETCH_SCRIPTS
CHART_JS, ANNOTATION_JS = paths.CHART_JS, paths.ANNOTATION_JS
FETCH_HINT = "cd %s && %s" % (REPO, " ".join(FETCH_COMMAND))

AB_MISSING = (
    "ApacheBench (ab) is missing and the lab could not install it. Install it, then run again:\n"
    "    Debian/Ubuntu: sudo apt-get install -y apache2-utils\n"
    "    Fedora/RHEL:   sudo dnf install -y httpd-tools\n"
    "    Alpine:        apk add apache2-utils"
)
SS_MISSING = (
    "ss is missing and the lab could not install it: the lab reads each run's bytes per call from the "
    "kernel's counters of the square services' connections with it. Install iproute2, then run again:\n"
    "    Debian/Ubuntu: sudo apt-get install -y iproute2\n"
    "    Fedora/RHEL:   sudo dnf install -y iproute\n"
    "    Alpine:        apk add iproute2"
)


# The shared core: run an installer, and say what failed.


def _say(line: str) -> None:
    print(line, flush=True)


def _install(
    command: List[str],
    what: str,
    why: str,
    cwd: Optional[str] = None,
    env: Optional[Mapping[str, str]] = None,
    shown: bool = False,
) -> None:
    """Runs an installer (go install, go build, Maven); ToolMissing naming it, what it leaves missing (why) and the
    end of its output when it fails. A shown installer prints to the terminal instead, where its errors are."""
    done = subprocess.run(
        command,
        cwd=cwd,
        env=dict(env) if env is not None else None,
        stdin=subprocess.DEVNULL,
        stdout=None if shown else subprocess.PIPE,
        stderr=None if shown else subprocess.STDOUT,
        text=True,
    )
    if done.returncode != 0:
        raise ToolMissing(
            "%s failed (exit code %d), so %s%s"
            % (
                what,
                done.returncode,
                why,
                " (see above)" if shown else ":\n  " + "\n  ".join(last_lines(done.stdout, 15)),
            )
        )


def last_lines(text: str, count: int) -> List[str]:
    """The last count non-blank lines of a tool's output, without the time Go's log puts before each."""
    lines = [_GO_LOG_PREFIX.sub("", line) for line in text.strip().splitlines() if line.strip()]
    return lines[-count:] or ["(no message)"]


def _version_output(binary: str) -> Optional[str]:
    """What `<binary> -version` prints, or None without a working binary."""
    try:
        done = subprocess.run(
            [binary, "-version"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=30
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


# Found only: java and Go.


def jcmd(java: str, why: str) -> str:
    """jcmd of the JDK that `java` belongs to (beside it, through links), else the one on PATH."""
    found_java = shutil.which(java)
    beside = os.path.join(os.path.dirname(os.path.realpath(found_java)), "jcmd") if found_java else None
    found = beside if beside and os.access(beside, os.X_OK) else shutil.which("jcmd")
    if not found:
        raise ToolMissing(
            "jcmd is missing beside %s: %s; install the full JDK (Debian: openjdk-17-jdk-headless)" % (java, why)
        )
    return found


def java() -> str:
    """The lab's own java: JAVA_HOME's, else the one on PATH."""
    found = os.path.join(os.environ["JAVA_HOME"], "bin", "java") if os.environ.get("JAVA_HOME") else "java"
    if not shutil.which(found):
        raise ToolMissing(
            "java is missing: install a JDK 17 or newer (Debian: apt-get install -y openjdk-17-jdk-headless)"
        )
    return found


def find_go() -> Optional[str]:
    found = shutil.which("go")
    if found:
        return found
    return GO_FALLBACK if os.access(GO_FALLBACK, os.X_OK) else None


# The parameters named find_go shadow the function, which is their default: _FIND_GO names it.
_FIND_GO = find_go


def _go(find: Optional[Callable[[], Optional[str]]], without_go: str) -> str:
    go = (find or _FIND_GO)()
    if not go:
        raise ToolMissing(without_go)
    return go


# From apt: ab and ss.


def ensure_command(command: str, debian_package: str, missing: str, log=_say) -> None:
    """A command the lab runs (ab, ss), installed from its Debian package when it is missing and the lab may
    install; else the error says what to run."""
    if shutil.which(command):
        return
    # As root, or through sudo when it needs no password.
    sudo = [] if os.geteuid() == 0 else ["sudo", "-n"]
    may_install = not sudo or (
        shutil.which("sudo")
        and subprocess.run(["sudo", "-n", "true"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0
    )
    if shutil.which("apt-get") and may_install:
        log("[lab] %s is missing: installing Debian's %s" % (command, debian_package))
        apt = sudo + ["env", "DEBIAN_FRONTEND=noninteractive", "apt-get"]
        if subprocess.run(apt + ["install", "-y", "-q", debian_package], stdout=subprocess.DEVNULL).returncode != 0:
            subprocess.run(apt + ["update", "-q"], stdout=subprocess.DEVNULL)
            subprocess.run(apt + ["install", "-y", "-q", debian_package], stdout=subprocess.DEVNULL)
    if not shutil.which(command):
        raise ToolMissing(missing)


# With Go, into .tools/bin: Vegeta and Toxiproxy.


def ensure_vegeta(tools_bin: str = TOOLS_BIN, find_go: Optional[Callable[[], Optional[str]]] = None, log=_say) -> str:
    """The path of a Vegeta VEGETA_VERSION binary in tools_bin, installed there with `go install` if it is not yet.

    Vegeta's -version prints the version its build stamped in (`Version: v12.13.0` for a release); a plain
    `go install` stamps nothing (`Version: ` empty), so the lab stamps the version itself, and a binary that does
    not say VEGETA_VERSION is replaced.
    """
    binary = os.path.join(tools_bin, "vegeta")
    if vegeta_version(binary) == VEGETA_VERSION:
        return binary
    go = _go(
        find_go,
        "Go is needed for LOAD=open: the lab installs its load generator, Vegeta %s, with `go install`. "
        "Install Go (Debian: apt-get install -y golang, or https://go.dev/dl) and run the lab again; "
        "LOAD=closed (ab) needs no Go." % VEGETA_VERSION,
    )
    package = "%s@%s" % (VEGETA_MODULE, VEGETA_VERSION)
    log("[lab] installing Vegeta %s (go install %s)" % (VEGETA_VERSION, package))
    os.makedirs(tools_bin, exist_ok=True)
    _install(
        [go, "install", "-ldflags=-X main.Version=%s" % VEGETA_VERSION, package],
        "go install " + package,
        "LOAD=open has no load generator",
        env=dict(os.environ, GOBIN=os.path.abspath(tools_bin)),
    )
    found = vegeta_version(binary)
    if found != VEGETA_VERSION:
        raise ToolMissing(
            "go install %s left %s reporting version %r, not %s" % (package, binary, found, VEGETA_VERSION)
        )
    return binary


def vegeta_version(binary: str) -> Optional[str]:
    """The version `<binary> -version` reports ("" when its build stamped none), or None without a working one."""
    output = _version_output(binary)
    return version_of(output) if output is not None else None


def version_of(version_output: str) -> Optional[str]:
    """The version in `vegeta -version`'s output ("Version: v12.13.0", then Commit, Runtime and Date lines)."""
    match = re.search(r"^Version:[ \t]*(\S*)", version_output, re.MULTILINE)
    return match.group(1) if match else None


def ensure_toxiproxy(
    tools_bin: str = TOOLS_BIN,
    source_dir: str = TOXIPROXY_SOURCE,
    find_go: Optional[Callable[[], Optional[str]]] = None,
    log=_say,
) -> str:
    """The path of the lab's Toxiproxy server in tools_bin, built there with `go build` from source_dir when it is
    missing, does not report TOXIPROXY_STAMP, or is older than one of its sources."""
    binary = os.path.join(tools_bin, TOXIPROXY_BINARY)
    if toxiproxy_version(binary) == TOXIPROXY_STAMP and not _older_than_sources(binary, source_dir):
        return binary
    go = _go(
        find_go,
        "Go is needed for NETWORK=%s: the lab builds its network emulator, Toxiproxy %s, with `go "
        "build`. Install Go (https://go.dev/dl; Debian's golang package is too old for Toxiproxy) and "
        "run the lab again; NETWORK=loopback needs no Go."
        % ("|".join(name for name in catalogue.NETWORKS if catalogue.PROFILES[name].proxied), TOXIPROXY_VERSION),
    )
    log("[lab] building Toxiproxy %s with the latency_us toxic (go build in %s)" % (TOXIPROXY_VERSION, source_dir))
    os.makedirs(tools_bin, exist_ok=True)
    _install(
        [
            go,
            "build",
            "-ldflags=-X github.com/Shopify/toxiproxy/v2.Version=" + TOXIPROXY_STAMP,
            "-o",
            os.path.abspath(binary),
            ".",
        ],
        "go build of Toxiproxy",
        "NETWORK has no emulator",
        cwd=source_dir,
    )
    found = toxiproxy_version(binary)
    if found != TOXIPROXY_STAMP:
        raise ToolMissing("go build left %s reporting version %r, not %s" % (binary, found, TOXIPROXY_STAMP))
    return binary


def toxiproxy_version(binary: str) -> Optional[str]:
    """What `<binary> -version` reports ("toxiproxy-server <version>"), or None without a working binary."""
    words = (_version_output(binary) or "").split()
    return words[1] if len(words) >= 2 and words[0] == TOXIPROXY_BINARY else None


def _older_than_sources(binary: str, source_dir: str) -> bool:
    built = os.path.getmtime(binary)
    return any(
        os.path.getmtime(os.path.join(source_dir, name)) > built
        for name in os.listdir(source_dir)
        if name.endswith((".go", ".mod", ".sum"))
    )


# With Maven: the jars and the report's scripts.


def ensure_jars(repo: str, modules: List[str], skip_build: bool, log=_say) -> Dict[str, str]:
    """Each module's jar, building the missing and stale ones with the Maven wrapper (unless skip_build)."""
    found = {m: jar_of(repo, m) for m in modules}
    missing = [m for m, jar in found.items() if jar is None]
    outdated = [m for m, jar in found.items() if jar is not None and stale(repo, m, jar)]
    if not missing and not outdated:
        log("[lab] jars are up to date")
    elif skip_build:
        if missing:
            raise ToolMissing(
                "no jar for %s and LAB_SKIP_BUILD=1: build first with ./mvnw -B package -DskipTests" % " ".join(missing)
            )
        log(
            "[lab] warning: the jars of %s are older than their sources; LAB_SKIP_BUILD=1, so they are used as they "
            "are" % " ".join(outdated)
        )
    else:
        log("[lab] building %s (./mvnw -B -q package -DskipTests)" % " ".join(missing + outdated))
        _install(
            [
                os.path.join(repo, "mvnw"),
                "-B",
                "-q",
                "package",
                "-DskipTests",
                "-pl",
                ",".join(missing + outdated),
                "-am",
            ],
            "the build",
            "there are no jars to run",
            cwd=repo,
            shown=True,
        )
    built = {module: jar_of(repo, module) for module in modules}
    still_missing = [module for module, jar in built.items() if jar is None]
    if still_missing:
        raise ToolMissing("the build made no jar for %s: see its output above" % " ".join(still_missing))
    return {module: jar for module, jar in built.items() if jar is not None}


def jar_of(repo: str, module: str) -> Optional[str]:
    """The executable jar of a module: the newest <module>-<version>.jar in its target folder."""
    candidates = [
        jar
        for jar in glob.glob(os.path.join(repo, module, "target", os.path.basename(module) + "-*.jar"))
        if not jar.endswith(("-plain.jar", "-sources.jar"))
    ]
    return max(candidates, key=os.path.getmtime) if candidates else None


def stale(repo: str, module: str, jar: str) -> bool:
    """True when a source of the module, or of a module it is built from, changed after its jar was built.
    Only sources count: Maven leaves a jar untouched when a pom changed but the classes did not."""
    built = os.path.getmtime(jar)
    for folder in [os.path.join(repo, module, "src")] + [os.path.join(repo, m, "src") for m in _libraries(repo)]:
        for root, _, files in os.walk(folder):
            if any(os.path.getmtime(os.path.join(root, name)) > built for name in files):
                return True
    return False


def _libraries(repo: str) -> List[str]:
    """The project's library modules the services and the floor are built from."""
    modules = (
        "proto-module",
        "payload-shapes",
        "grpc-stream-flow",
        "observation-meters",
        "tls-words",
        # What both Spring generations share of each service: most of its sources live there.
        "square-rest-core",
        "square-grpc-core",
        "aggregator-core",
    )
    return [m for m in modules if os.path.isdir(os.path.join(repo, m))]


def ensure_scripts(fetch: bool = False, log=_say) -> None:
    """Fails, saying what to run, when Chart.js or its annotation plugin is missing; with fetch, runs that first."""
    if fetch and _missing_scripts():
        log("[lab] fetching Chart.js and its annotation plugin for the report (%s)" % " ".join(FETCH_COMMAND))
        _install(FETCH_COMMAND, "fetching them (%s)" % FETCH_HINT, "the report has no charts", cwd=REPO)
    missing = _missing_scripts()
    if missing:
        raise ToolMissing(
            "Chart.js and its annotation plugin are not unpacked (%s missing); fetch them with: %s"
            % (", ".join(missing), FETCH_HINT)
        )


def _missing_scripts() -> List[str]:
    return [os.path.relpath(path, REPO) for path in (CHART_JS, ANNOTATION_JS) if not os.path.isfile(path)]


ASYNC_PROFILER_VERSION = "4.2"
_CENTRAL = "https://repo.maven.apache.org/maven2/tools/profiler/async-profiler/%s/async-profiler-%s.jar"


def ensure_async_profiler(tools_dir: str = os.path.join(LAB_DIR, ".tools")) -> str:
    """async-profiler's library for this machine, from Maven Central's jar (checked against its SHA-1) on first use."""
    arch = {"x86_64": "linux-x64", "amd64": "linux-x64", "aarch64": "linux-arm64", "arm64": "linux-arm64"}.get(
        platform.machine().lower()
    )
    if platform.system() != "Linux" or arch is None:
        raise ToolMissing(
            "the profile needs Linux on x86-64 or arm64 (async-profiler), not %s %s"
            % (platform.system(), platform.machine())
        )
    folder = os.path.join(tools_dir, "async-profiler-" + ASYNC_PROFILER_VERSION)
    library = os.path.join(folder, arch, "libasyncProfiler.so")
    if os.path.isfile(library):
        return library
    url = _CENTRAL % (ASYNC_PROFILER_VERSION, ASYNC_PROFILER_VERSION)
    print("[lab] fetching async-profiler %s from %s" % (ASYNC_PROFILER_VERSION, url), flush=True)
    try:
        with urllib.request.urlopen(url, timeout=60) as response:
            jar = response.read()
        with urllib.request.urlopen(url + ".sha1", timeout=60) as response:
            expected = response.read().decode().split()[0]
    except OSError as e:
        raise ToolMissing("async-profiler could not be fetched from %s: %s" % (url, e)) from None
    if hashlib.sha1(jar).hexdigest() != expected:
        raise ToolMissing("async-profiler's jar from %s does not match its SHA-1 %s" % (url, expected))
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "async-profiler.jar")
    with open(path, "wb") as handle:
        handle.write(jar)
    with zipfile.ZipFile(path) as archive:
        archive.extract("%s/libasyncProfiler.so" % arch, folder)
    return library
