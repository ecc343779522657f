"""Where each microsecond of a path goes: CPU flame graphs of its square service (gRPC or REST) and the aggregator,
and each one's CPU per call by layer (lab.measure.layers), under the lab's default load (loadtest/run.sh --profile).

The three services run as the lab runs them (jvm.options, the lab's ports and deadline); each path is warmed up for
--warmup seconds of `ab -c 100 .../<path>/1000`; then async-profiler (from Maven Central,
`tools.profiler:async-profiler`, into loadtest/.tools) is attached to the path's square service and the aggregator
with jcmd, and samples every millisecond of CPU time while `ab -n REQUESTS -c 100` runs; their CPU time is read from
/proc around it. Each process's share of samples in a layer, times its CPU per call, is that layer's CPU per call.

It writes <service>-<path>.html (the flame graph), <service>-<path>.collapsed, profile.json and profile.md.
"""

import argparse
import collections
import os
from typing import Dict, List, Tuple

from ..core import catalogue
from ..core.errors import LabError
from ..host import cpu, jvm, tools
from ..load import ab_output
from ..measure import layers
from ..results import results
from ..stage.deadlines import Deadlines
from . import base

TICKS_PER_S = os.sysconf("SC_CLK_TCK")
N = 1000
CONCURRENCY = 100
# Sampling interval: a millisecond of CPU time.
INTERVAL_NS = 1_000_000


class Profile(base.Experiment):
    name = "profile"
    about = "CPU flame graphs of each path's square service and the aggregator, and their CPU per call by layer"
    document = "profile.json"
    summary = "profile.md.j2"
    prefix = "profile-"

    @classmethod
    def add_options(cls, parser: argparse.ArgumentParser) -> None:
        base.paths_option(parser, help="the paths profiled")
        parser.add_argument("--requests", type=int, default=1000, help="ab -n while profiled")
        parser.add_argument("--warmup", type=int, default=10, help="seconds of ab -c 100 on each path before")
        parser.add_argument("--out", help="the results folder (default loadtest/results/profile-<time>)")

    @classmethod
    def checked(cls, options: argparse.Namespace, error) -> None:
        options.path_names = base.path_names(options, error)
        if options.requests < 1 or options.warmup < 0:
            error("--requests must be at least 1 and --warmup at least 0")

    def measure(self, out: str) -> Dict:
        options = self.options
        settings = base.lab_settings(network=[catalogue.LOOPBACK], floor=False, tls=[catalogue.PLAINTEXT])
        prepared = base.prepare(settings, options.path_names)
        library = tools.ensure_async_profiler()
        deadlines = Deadlines(settings.ab_timeout_s, None, settings.ab_timeout_s, "as the lab gives it")
        rows: List[Dict] = []
        record = {
            "environment": prepared.describe(),
            "settings": {
                "paths": options.path_names,
                "requests": options.requests,
                "warmup_s": options.warmup,
                "n": N,
                "concurrency": CONCURRENCY,
                "java_opts": settings.java_opts,
            },
            "started_at": results.now(),
            "rows": rows,
        }
        with base.services_up(prepared, out, deadlines) as (_, started):
            pids = {service.name: service.pids[0] for service in started}
            base_url = base.aggregator_of(started).base_url or ""
            for path in options.path_names:
                print("[lab] warming up %s for %d s" % (path, options.warmup), flush=True)
                if options.warmup:
                    ab_output.run(_url(base_url, path), 10_000_000, CONCURRENCY, 120, options.warmup)
            for path in options.path_names:
                rows.append(_profile(path, options.requests, pids, library, base_url, out))
        return record

    def facts(self, record: Dict) -> Dict:
        return {"layers_table": layers_table}


main = Profile.main


def profiled(path: str) -> Tuple[str, str]:
    """The two processes a path's calls go through: its square service, and the aggregator."""
    return catalogue.ALL[path].downstream or catalogue.SQUARE_REST, catalogue.AGGREGATOR


def _profile(path: str, requests: int, pids: Dict[str, int], library: str, base_url: str, out: str) -> Dict:
    name = path.replace("/", "-")
    services = profiled(path)
    profiling: List[str] = []
    try:
        for service in services:
            _agent(pids[service], library, "start,event=cpu,interval=%d" % INTERVAL_NS)
            profiling.append(service)
        before = {service: cpu.process_ticks(pids[service]) for service in services}
        report = ab_output.parse_report(ab_output.run(_url(base_url, path), requests, CONCURRENCY, 120))
        after = {service: cpu.process_ticks(pids[service]) for service in services}
    except BaseException:
        # A profiler left running would sample the next path too, or the services' shutdown.
        for service in profiling:
            try:
                _agent(pids[service], library, "stop")
            except LabError:
                pass
        raise
    accounts = {}
    for service in services:
        collapsed = os.path.join(out, "%s-%s.collapsed" % (service, name))
        _agent(pids[service], library, "dump,file=" + collapsed)
        _agent(pids[service], library, "stop,file=" + os.path.join(out, "%s-%s.html" % (service, name)))
        with open(collapsed) as handle:
            accounts[service] = dict(layers.account(handle))
    answered = ab_output.answered_2xx(report)
    if answered < requests:
        raise LabError("%s: %d of %d requests answered 200 while profiled" % (path, answered, requests))
    calls = answered * N
    us_per_call = {s: round((after[s] - before[s]) / TICKS_PER_S / calls * 1e6, 2) for s in services}
    return {"path": path, "rps": report.rps, "us_per_call": us_per_call, "samples": accounts}


def layers_table(row: Dict) -> Dict:
    """One path's layers as a table: each process's share of samples and CPU per call, layers under 1 % of both
    summed up, and metering over all its layers."""
    us_per_call, accounts = row["us_per_call"], {s: collections.Counter(a) for s, a in row["samples"].items()}
    services = list(us_per_call)
    totals = {s: sum(accounts[s].values()) or 1 for s in services}
    shares: Dict[str, Dict[str, float]] = collections.defaultdict(dict)
    for service in services:
        for name, samples in accounts[service].items():
            shares[name][service] = samples / totals[service]
    small = {s: 0.0 for s in services}
    rows = []
    for name in sorted(shares, key=lambda n: -max(shares[n].values())):
        if max(shares[name].values()) < 0.01:
            for s in services:
                small[s] += shares[name].get(s, 0.0)
            continue
        rows.append([name] + [_cell(shares[name].get(s, 0.0), us_per_call[s]) for s in services])
    rows.append(["layers under 1 %"] + [_cell(small[s], us_per_call[s]) for s in services])
    rows.append(
        ["**metering, all layers**"] + [_cell(layers.metering_share(accounts[s]), us_per_call[s]) for s in services]
    )
    heads = ["layer"] + ["%s share, us per call" % s for s in services]
    return {"heads": heads, "rows": [{"cells": cells} for cells in rows]}


def _cell(share: float, us: float) -> str:
    return "%.1f %%, %.2f" % (100 * share, share * us) if share else "-"


def _agent(pid: int, library: str, options: str) -> None:
    # Quoted: jcmd would read `start,event=cpu` as a named argument `start,event`.
    said = jvm.jcmd(pid, 'JVMTI.agent_load %s "%s"' % (library, options))
    if "return code: 0" not in said:
        raise LabError("async-profiler's %s in %d failed: %s" % (options.split(",")[0], pid, said.strip()[-300:]))


def _url(base_url: str, path: str, n: int = N) -> str:
    return "%s/%s/%d" % (base_url, path, n)
