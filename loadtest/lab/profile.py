"""Where each microsecond of a path goes: CPU flame graphs of its square service (gRPC or REST) and the aggregator,
and each one's CPU per call by layer (lab.layers), under the lab's default load.

    loadtest/run.sh --profile [--paths grpc/unary grpc/stream] [--requests 1000] [--warmup 10] [--out DIR]

The three services run from their jars with the lab's jvm.options on their own ports (8080, 7575, 6565), each in a
session of its own; each path is warmed up for --warmup seconds of `ab -c 100 .../<path>/1000`; then async-profiler
(from Maven Central, `tools.profiler:async-profiler`, into loadtest/.tools) is attached to the path's square service
and the aggregator with jcmd, and sampled every millisecond of CPU time while `ab -n REQUESTS -c 100` runs; their
CPU time is read from /proc around it. Each process's share of samples in a layer, times its CPU per call, is that
layer's CPU per call.

It writes <service>-<path>.html (the flame graph), <service>-<path>.collapsed and account.md into DIR
(default loadtest/results/profile-<time>).
"""

import argparse
import collections
import datetime
import hashlib
import os
import platform
import subprocess
import urllib.request
import zipfile
from typing import Counter, Dict, List, Optional, Sequence, Tuple

from . import ab_output, cpu, http_check, layers, tools
from .article import answered_2xx
from .errors import LabError, ToolMissing, exit_status
from .processes import Processes, raise_on_term

ASYNC_PROFILER_VERSION = "4.2"
_CENTRAL = "https://repo.maven.apache.org/maven2/tools/profiler/async-profiler/%s/async-profiler-%s.jar"
LAB_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO = os.path.dirname(LAB_DIR)
TICKS_PER_S = os.sysconf("SC_CLK_TCK")
AGGREGATOR, GRPC, REST = "aggregator", "grpc-square", "rest-square"
MODULES = {REST: "square-rest-service", GRPC: "square-grpc-service", AGGREGATOR: "aggregator-service"}
PORTS = (8080, 7575, 6565)
PATHS = ("grpc/unary", "grpc/stream", "grpc/pingpong", "rest/unary", "rest/h2c")
N = 1000
CONCURRENCY = 100
# Sampling interval: a millisecond of CPU time.
INTERVAL_NS = 1_000_000


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        prog="loadtest/run.sh --profile",
        description="CPU flame graphs and CPU per call by layer of a path's square service and the aggregator.",
    )
    parser.add_argument(
        "--paths",
        nargs="+",
        default=["grpc/unary", "grpc/stream"],
        choices=PATHS,
    )
    parser.add_argument("--requests", type=int, default=1000, help="ab -n of each profiled run (default 1000)")
    parser.add_argument("--warmup", type=int, default=10, help="seconds of ab on each path before any profile")
    parser.add_argument(
        "--out",
        default=os.path.join(LAB_DIR, "results", "profile-" + datetime.datetime.now().strftime("%Y%m%d-%H%M%S")),
    )
    args = parser.parse_args(argv)
    if args.requests < 1 or args.warmup < 0:
        parser.error("--requests must be at least 1 and --warmup at least 0")
    raise_on_term()
    return exit_status(lambda: _run(args.paths, args.requests, args.warmup, os.path.abspath(args.out)))


def _run(paths: List[str], requests: int, warmup_s: int, out: str) -> int:
    http_check.refuse_taken(PORTS, "the profile runs the services on their own ports")
    java = tools.java()
    jcmd = tools.jcmd(java, "the profile attaches async-profiler with it")
    library = ensure_async_profiler()
    jars = tools.ensure_jars(REPO, list(MODULES.values()), os.environ.get("LAB_SKIP_BUILD", "0") == "1")
    os.makedirs(out, exist_ok=True)
    sections = []
    with Processes() as processes:
        pids = {}
        for service in (REST, GRPC, AGGREGATOR):
            command = [java, "@" + os.path.join(REPO, "jvm.options"), "-jar", jars[MODULES[service]]]
            if service == AGGREGATOR:
                # As the lab gives it: as long as ab waits, so that nothing is shed.
                command.append("--aggregator.deadline=120s")
            pids[service] = processes.start(command, os.path.join(out, service + ".log")).pid
        http_check.wait_answering([_url(path, 1) for path in paths], pids, 180.0, "the services")
        for path in paths:
            print("[profile] warming up %s for %d s" % (path, warmup_s), flush=True)
            if warmup_s:
                ab_output.run(_url(path), 10_000_000, CONCURRENCY, 120, warmup_s)
        for path in paths:
            sections.append(_profile(path, requests, pids, jcmd, library, out))
    text = "\n".join(sections)
    with open(os.path.join(out, "account.md"), "w") as handle:
        handle.write(text)
    print(text)
    print("[profile] flame graphs and account.md in %s" % out)
    return 0


def profiled(path: str) -> Tuple[str, str]:
    """The two processes a path's calls go through: its square service, and the aggregator."""
    return (REST if path.startswith("rest/") else GRPC, AGGREGATOR)


def _profile(path: str, requests: int, pids: Dict[str, int], jcmd: str, library: str, out: str) -> str:
    name = path.replace("/", "-")
    services = profiled(path)
    profiling = []
    try:
        for service in services:
            _agent(jcmd, pids[service], library, "start,event=cpu,interval=%d" % INTERVAL_NS)
            profiling.append(service)
        before = {service: cpu.process_ticks(pids[service]) for service in services}
        report = ab_output.parse_report(ab_output.run(_url(path), requests, CONCURRENCY, 120))
        after = {service: cpu.process_ticks(pids[service]) for service in services}
    except BaseException:
        # A profiler left running would sample the next path too, or the services' shutdown.
        for service in profiling:
            try:
                _agent(jcmd, pids[service], library, "stop")
            except LabError:
                pass
        raise
    accounts = {}
    for service in services:
        collapsed = os.path.join(out, "%s-%s.collapsed" % (service, name))
        _agent(jcmd, pids[service], library, "dump,file=" + collapsed)
        _agent(jcmd, pids[service], library, "stop,file=" + os.path.join(out, "%s-%s.html" % (service, name)))
        with open(collapsed) as handle:
            accounts[service] = layers.account(handle)
    answered = answered_2xx(report)
    if answered < requests:
        raise LabError("%s: %d of %d requests answered 200 while profiled" % (path, answered, requests))
    calls = answered * N
    us_per_call = {service: (after[service] - before[service]) / TICKS_PER_S / calls * 1e6 for service in services}
    return markdown(path, report.rps, us_per_call, accounts)


def markdown(path: str, rps: float, us_per_call: Dict[str, float], accounts: Dict[str, Counter[str]]) -> str:
    """One path's layers: each process's share of samples and CPU per call, layers under 1 % of both summed up; the
    processes are those of `us_per_call`, in its order."""
    services = list(us_per_call)
    lines = [
        "### %s: %.1f req/s while profiled; CPU per call %s"
        % (path, rps, ", ".join("%s %.2f us" % (s, us_per_call[s]) for s in services)),
        "",
        "| layer | %s |" % " | ".join("%s share, us per call" % s for s in services),
        "| --- | %s |" % " | ".join("---" for _ in services),
    ]
    totals = {s: sum(accounts[s].values()) or 1 for s in services}
    shares = collections.defaultdict(dict)  # type: Dict[str, Dict[str, float]]
    for service in services:
        for name, samples in accounts[service].items():
            shares[name][service] = samples / totals[service]
    small = {s: 0.0 for s in services}
    for name in sorted(shares, key=lambda n: -max(shares[n].values())):
        if max(shares[name].values()) < 0.01:
            for s in services:
                small[s] += shares[name].get(s, 0.0)
            continue
        lines.append(
            "| %s | %s |" % (name, " | ".join(_cell(shares[name].get(s, 0.0), us_per_call[s]) for s in services))
        )
    lines.append("| layers under 1 %% | %s |" % " | ".join(_cell(small[s], us_per_call[s]) for s in services))
    lines.append(
        "| **metering, all layers** | %s |"
        % " | ".join(_cell(layers.metering_share(accounts[s]), us_per_call[s]) for s in services)
    )
    return "\n".join(lines) + "\n"


def _cell(share: float, us: float) -> str:
    return "%.1f %%, %.2f" % (100 * share, share * us) if share else "-"


def _agent(jcmd: str, pid: int, library: str, options: str) -> None:
    # Quoted: jcmd would read `start,event=cpu` as a named argument `start,event`.
    done = subprocess.run(
        [jcmd, str(pid), "JVMTI.agent_load", library, '"%s"' % options], capture_output=True, text=True
    )
    if done.returncode != 0 or "return code: 0" not in done.stdout:
        raise LabError(
            "async-profiler's %s in %d failed: %s"
            % (options.split(",")[0], pid, (done.stdout + done.stderr).strip()[-300:])
        )


def _url(path: str, n: int = N) -> str:
    return "http://127.0.0.1:%d/%s/%d" % (PORTS[0], path, n)


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
    print("[profile] fetching async-profiler %s from %s" % (ASYNC_PROFILER_VERSION, url), flush=True)
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


if __name__ == "__main__":
    raise SystemExit(main())
