"""Many clients, measured: `python3 -m lab clients` (loadtest/run.sh --clients).

Starts the square services and the aggregator on loopback as the lab does (jvm.options, AGGREGATOR_ARGS and
--aggregator-args), then for each path, n and client count runs real ApacheBench for --duration seconds, a new
connection per request as the article's ab did, after a warm-up at the lowest count that lasts until the JIT settles.
Around each run it reads the aggregator's own counters (answers by status on the path, admission sheds), polls
/actuator/health on a new connection every 250 ms, and afterwards checks that every service still runs without an
OutOfMemoryError and reads their peak RSS. Each row's goodput (200s a second) is set against the best goodput of the
lower client counts of its path and n. It writes clients.json and clients.md into the results folder and exits 1 when
a check failed: a service gone or out of memory, a health check over the limit or failed, an answer other than a 200
or a 503, goodput below --goodput-share of the best lower count's.

ab's child sockets count against this process's open-files limit, so it raises its soft limit to the hard one first.
"""

import argparse
import os
import resource
import subprocess
import time
from typing import Dict, List

from ..core import catalogue, metrics, warmup
from ..core.errors import AbOutputError, LabError, MetricsError, ServiceExited
from ..host import cpu, tools
from ..host.processes import Watched, check_alive
from ..load import ab_output, health_probe, http_check
from ..load.health_probe import HealthProbe
from ..load.load_generator import run_ab
from ..measure import server_metrics
from ..measure.idle import wait_idle
from ..results import results
from ..stage.deadlines import Deadlines
from . import base, clients_figures
from .clients_figures import Counts, Limits, Run

# ab's -t: as many requests as the time allows, up to this many.
MAX_REQUESTS = 10_000_000
# ab's -s: seconds it waits for any socket to move before it gives up the run.
AB_TIMEOUT_S = 60
# Open files beyond ab's sockets: its own files, the lab's health checks and scrapes.
FD_HEADROOM = 100
OUT_OF_MEMORY = "OutOfMemoryError"
# How long the aggregator may take, after ab stopped, to answer what ab gave up on, beyond its deadline.
SETTLE_GRACE_S = 10.0
# The warm-up at the lowest count lasts up to this many times --warmup-seconds while the JIT compiles: its 5 s
# default is half the measured runs' warm-up, so it may take three times that.
WARM_UP_CAP = 3


class Clients(base.Experiment):
    name = "clients"
    about = (
        "Many clients on each aggregator path, one after the other: real ab (no keep-alive) at each client count for "
        "--duration seconds; reports goodput, sheds, other statuses, ab's failures, health-check times and each "
        "service's peak RSS, and exits 1 when a service died or ran out of memory, health took over "
        "--health-limit-ms, an answer was not a 200 or 503, or goodput fell below --goodput-share of the best lower "
        "client count's"
    )
    document = "clients.json"
    summary = "clients.md.j2"
    prefix = "clients-"

    @classmethod
    def add_options(cls, parser: argparse.ArgumentParser) -> None:
        base.paths_option(parser, help="the aggregator paths, measured one after the other")
        parser.add_argument("--n", default="1", help="squares per request; a space-separated list measures each")
        parser.add_argument(
            "--clients", default="100 1000 5000", help="concurrent ab clients, a run at each, lowest first"
        )
        parser.add_argument("--duration", type=int, default=20, help="seconds of each run (ab -t, whole seconds)")
        parser.add_argument(
            "--warmup-seconds",
            type=int,
            default=5,
            help="seconds of ab at the lowest client count before each path and n's runs, longer while a service's "
            "JIT still compiles (0: none)",
        )
        parser.add_argument(
            "--goodput-share",
            type=float,
            default=0.7,
            help="the least share of the best lower client count's goodput a row must keep; CI runs a lenient 0.2, "
            "because a busy 2-core machine moves goodput more than the issue's 0.7 allows",
        )
        parser.add_argument("--health-limit-ms", type=float, default=1000, help="the longest a health check may take")
        parser.add_argument(
            "--health-url",
            default=None,
            help="the health URL checked against --health-limit-ms (default: the aggregator's own /actuator/health); "
            "when it is another, the aggregator's own is polled and reported beside it",
        )
        parser.add_argument(
            "--aggregator-args",
            default="",
            help="Spring arguments for the aggregator in this command, after AGGREGATOR_ARGS; with an equals sign, as "
            "they start with --, e.g. --aggregator-args=--aggregator.admission.max-requests=200",
        )
        parser.add_argument(
            "--deadline",
            type=int,
            default=30,
            help="the aggregator's aggregator.deadline in seconds, its own default (unless AGGREGATOR_ARGS or "
            "--aggregator-args set it): admission judges what it can answer within it",
        )

    @classmethod
    def checked(cls, options: argparse.Namespace, error) -> None:
        options.path_names = base.path_names(options, error)
        options.n_values = base.whole_numbers(options.n, "--n", error)
        options.client_counts = sorted(set(base.whole_numbers(options.clients, "--clients", error)))
        if options.duration < 1 or options.deadline < 1:
            error("--duration and --deadline must be at least 1 (whole seconds)")
        if options.warmup_seconds < 0:
            error("--warmup-seconds must not be negative")
        if not 0 < options.goodput_share <= 1:
            error("--goodput-share must be above 0 and at most 1, e.g. 0.7")
        if options.health_limit_ms <= 0:
            error("--health-limit-ms must be more than 0")
        if options.health_url is not None and not options.health_url.startswith("http://"):
            error("--health-url must be an http:// URL, e.g. http://127.0.0.1:8081/actuator/health")

    def measure(self, out: str) -> Dict:
        options = self.options
        open_files = raise_open_files(max(options.client_counts) + FD_HEADROOM)
        tools.ensure_command("ab", "apache2-utils", tools.AB_MISSING)
        settings = base.lab_settings(
            network=[catalogue.LOOPBACK],
            floor=False,
            tls=[catalogue.PLAINTEXT],
            paths=options.path_names,
            aggregator_args=aggregator_args(options, os.environ.get("AGGREGATOR_ARGS", "")),
        )
        prepared = base.prepare(settings, options.path_names)
        os.makedirs(os.path.join(out, "raw"), exist_ok=True)
        limits = Limits(options.goodput_share, options.health_limit_ms)
        record = {
            "environment": prepared.describe(),
            "settings": dict(self.settings_record(prepared), open_files=open_files),
            "limits": limits.as_dict(),
            "started_at": results.now(),
        }
        deadlines = Deadlines(options.deadline, None, AB_TIMEOUT_S, "--deadline of the many-clients run")
        with base.services_up(prepared, out, deadlines) as (lab_stage, started):
            info = (lab_stage.aggregator_info() or {}).get("aggregator") or {}
            record["aggregator_deadline_s"] = (info.get("deadline-ms") or options.deadline * 1000) / 1000
            rows, stopped = exercise(options, started, out, limits)
        record.update(rows=rows, stopped=stopped)
        return record

    def settings_record(self, prepared: base.Prepared) -> Dict:
        options = self.options
        return {
            "paths": options.path_names,
            "n": options.n_values,
            "clients": options.client_counts,
            "duration_s": options.duration,
            "warmup_s": options.warmup_seconds,
            "ab": " ".join(ab_command("URL", "CLIENTS", options.duration)),
            "health_url": options.health_url,
            "java_opts": prepared.settings.java_opts,
            "aggregator_args": prepared.settings.aggregator_args,
            "stack": prepared.stack.label,
            "deadline_s": options.deadline,
        }

    def checks(self, record: Dict) -> Dict[str, List[str]]:
        return clients_figures.checks(record["rows"], Limits(**record["limits"]), record["stopped"])

    def facts(self, record: Dict) -> Dict:
        limits = Limits(**record["limits"])
        return {
            "clients_table": clients_figures.table(record["rows"], limits),
            "columns": COLUMNS % {"limit": limits.health_limit_ms / 1000, "share": 100 * limits.goodput_share},
        }


main = Clients.main
parse = Clients.parse


def raise_open_files(needed: int) -> Dict[str, int]:
    """Raises this process's soft open-files limit, which ab and the services inherit, as far as the hard limit
    allows; a LabError saying how to raise the hard limit when it is below needed."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    try:
        wanted = clients_figures.open_files_soft_limit(soft, hard, needed, resource.RLIM_INFINITY)
    except ValueError as error:
        raise LabError(str(error)) from None
    if wanted != soft:
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
    return {"soft": wanted, "hard": hard, "needed": needed}


def aggregator_args(options: argparse.Namespace, from_env: str) -> str:
    """AGGREGATOR_ARGS, then --aggregator-args."""
    return " ".join(part for part in [from_env.strip(), options.aggregator_args.strip()] if part)


def ab_command(url: str, clients, seconds: int) -> List[str]:
    """ab for seconds with clients at once, a new connection per request, socket errors counted, not fatal."""
    return ab_output.ab_command(url, MAX_REQUESTS, clients, AB_TIMEOUT_S, None, seconds=seconds)


def health_urls(options: argparse.Namespace, base_url: str) -> List[str]:
    """The health URL checked against the limit, then the main port's when that is another (reported only)."""
    main_url = base_url + "/actuator/health"
    checked = options.health_url or main_url
    return [checked] + ([main_url] if checked != main_url else [])


def exercise(options: argparse.Namespace, started: List, results_dir: str, limits: Limits):
    """(rows, why it stopped early or None): each path, n and client count, the services up."""
    aggregator = next(service for service in started if service.name == catalogue.AGGREGATOR)
    watched = [process for service in started for process in service.watched]
    urls = health_urls(options, aggregator.base_url)
    if not http_check.is_healthy(urls[0]):
        raise LabError("%s does not answer UP, so health cannot be measured: check --health-url" % urls[0])
    timeout_s = options.deadline + SETTLE_GRACE_S
    rows: List[Dict] = []
    for name in options.path_names:
        path = catalogue.ALL[name]
        for n in options.n_values:
            url = path.url({catalogue.AGGREGATOR: aggregator.base_url}, n)
            problem = http_check.answer_mismatch(path, url, n, timeout_s)
            if problem:
                raise LabError("a path answers wrongly before any load, so the lab measures nothing:\n  " + problem)
            try:
                if options.warmup_seconds:
                    warm_up(options, path, n, url, started, watched, results_dir, timeout_s)
                for clients in options.client_counts:
                    rows.append(measure(options, path, n, clients, url, started, watched, results_dir, urls, limits))
                    clients_figures.compare_lower(rows)
                    print("[lab] %s" % row_line(rows[-1]), flush=True)
            except ServiceExited as error:
                found = out_of_memory(watched)
                return rows, str(error) + (
                    "\n[lab] OutOfMemoryError in the log of %s" % " ".join(found) if found else ""
                )
    return rows, None


def warm_up(
    options: argparse.Namespace,
    path: catalogue.Path,
    n: int,
    url: str,
    started: List,
    watched: List[Watched],
    results_dir: str,
    timeout_s: float,
) -> None:
    """The lab's warm-up rule (lab.core.warmup) on ab at the lowest count, up to WARM_UP_CAP times --warmup-seconds:
    the lowest count's goodput is what every other row is held to, and code still being compiled under it made it
    move by half from one run to the next."""
    clients = options.client_counts[0]
    print(
        "[lab] warming up %s n=%d: %d clients for %d s or more, until the JIT settles"
        % (path.name, n, clients, options.warmup_seconds),
        flush=True,
    )
    aggregator = next(service for service in started if service.name == catalogue.AGGREGATOR)
    jit = server_metrics.JitWatch(
        {s.name: s.metrics_urls for s in started if s.name in path.services and s.metrics_urls}
    )
    stretches: List[int] = []

    def stretch(seconds: float) -> None:
        stretches.append(len(stretches) + 1)
        # ab's -t is whole seconds.
        run_ab(
            ab_command(url, clients, max(1, int(seconds))),
            os.path.join(results_dir, "raw", "%s_n%d_warmup%d.txt" % (path.name.replace("/", "-"), n, stretches[-1])),
            echo_command=True,
        )
        check_alive(watched, "the warm-up of %s n=%d" % (path.name, n))

    rule = warmup.Rule(options.warmup_seconds, cap=WARM_UP_CAP)
    warmup.warm(stretch, jit.busiest_share, rule, options.warmup_seconds)
    print("[lab] " + rule.said(), flush=True)
    settle(aggregator.metrics_urls[0], path, timeout_s, watched, "the warm-up of %s n=%d" % (path.name, n))


def measure(
    options: argparse.Namespace,
    path: catalogue.Path,
    n: int,
    clients: int,
    url: str,
    started: List,
    watched: List[Watched],
    results_dir: str,
    urls: List[str],
    limits: Limits,
) -> Dict:
    """One row: the counters before, ab with health polled beside it, the counters when it exited and once the
    aggregator settled, the services' state after."""
    during = "%s n=%d with %d clients" % (path.name, n, clients)
    aggregator = next(service for service in started if service.name == catalogue.AGGREGATOR)
    metrics_url = aggregator.metrics_urls[0]
    print("[lab] measuring %s for %d s" % (during, options.duration), flush=True)
    reset = all([cpu.reset_peak_rss(pid) for service in started for pid in service.pids])
    before = read_counts(metrics_url, path, watched, during)
    probes = [HealthProbe(health_url).start() for health_url in urls]
    began = time.monotonic()
    try:
        done, _ = run_ab(
            ab_command(url, clients, options.duration),
            os.path.join(results_dir, "raw", "%s_n%d_c%d.txt" % (path.name.replace("/", "-"), n, clients)),
            echo_command=True,
        )
        seconds = time.monotonic() - began
        at_end = read_counts(metrics_url, path, watched, during)
    finally:
        checks = [probe.stop() for probe in probes]
    settled = settle(metrics_url, path, options.deadline + SETTLE_GRACE_S, watched, during)
    found_oom = out_of_memory(watched)
    check_alive(watched, during)
    health = [
        health_probe.figures(health_url, found, limits.health_limit_ms) for health_url, found in zip(urls, checks)
    ]
    row = clients_figures.row(
        path,
        n,
        clients,
        Run(before, at_end, settled, seconds),
        ab_result(done, len(path.expected_body(n).encode())),
        health[0],
        health[1] if len(health) > 1 else None,
        {service.name: cpu.peak_rss_mib(service.pids) for service in started},
        found_oom,
    )
    row["peak_rss_of"] = "this run" if reset else "the process's life (clear_refs refused)"
    return row


def ab_result(done: subprocess.CompletedProcess, expected_bytes: int) -> Dict:
    """ab's figures, or why there are none: a run that exited non-zero (ab gives up when no socket moved for -s
    seconds, or when connecting fails over and over) has no report."""
    error = None
    if done.returncode != 0:
        error = "exited with code %d: %s" % (done.returncode, tools.last_lines(done.stderr, 1)[0])
    try:
        report_found = ab_output.parse_report(done.stdout)
    except AbOutputError as problem:
        report_found = None
        error = error or str(problem)
    return clients_figures.ab_figures(report_found, done.returncode, error, expected_bytes)


def read_counts(metrics_url: str, path: catalogue.Path, watched: List[Watched], during: str) -> Counts:
    """The aggregator's counters now; a service gone makes it ServiceExited, naming it, rather than a scrape error."""
    try:
        return clients_figures.counts(metrics.scrape(metrics_url), path)
    except MetricsError as error:
        check_alive(watched, during)
        raise LabError("the aggregator's metrics: %s" % error) from None


def settle(metrics_url: str, path: catalogue.Path, wait_s: float, watched: List[Watched], during: str) -> Counts:
    """The counters once the aggregator has answered what ab left behind: its work gauges at 0 and its answers on the
    path unchanged over half a second (lab.measure.idle), or wait_s has passed."""
    idle = wait_idle(
        metrics_url,
        wait_s,
        steady=lambda samples: clients_figures.counts(samples, path),
        on_error=lambda error: check_alive(watched, during),
    )
    return clients_figures.counts(idle.samples, path)


def out_of_memory(watched: List[Watched]) -> List[str]:
    """The services whose log has an OutOfMemoryError."""
    found = []
    for process in watched:
        try:
            with open(process.log_path, errors="replace") as handle:
                if any(OUT_OF_MEMORY in line for line in handle):
                    found.append(process.name)
        except OSError:
            continue
    return found


def row_line(row: Dict) -> str:
    """A row as the lab prints it as it goes."""
    health, ab = row["health"], row["ab"]
    share = row["goodput_vs_best_lower"]
    return (
        "%s n=%d c=%d: %.1f 200/s, %.1f shed/s, other %s, ab errors %s, health max %s ms (%d over), goodput vs "
        "best lower %s"
        % (
            row["path"],
            row["n"],
            row["clients"],
            row["goodput"],
            row["shed_per_s"],
            clients_figures.counts_text(row["other"]),
            ab["error"] or clients_figures.counts_text(ab["errors"]),
            health["max_ms"],
            health["over_limit"],
            "–" if share is None else "%.0f %%" % share,
        )
    )


COLUMNS = (
    "*goodput/s*: the aggregator's 200 answers on the path (its `http_server_requests` counter) from just "
    "before ab started to when it exited, over ab's wall time; *shed/s*: its 503s, counted until it settled; "
    "*other*: any other status; *ab errors*: ab's failed requests by kind (connect, receive, exceptions); "
    "*health*: a new connection to /actuator/health every 250 ms during the run, its slowest and p99 answer "
    "and how many took over %(limit)g s (or failed); *main-port*: the aggregator's own /actuator/health when "
    "--health-url is another; *peak RSS*: the aggregator's VmHWM over the run; *goodput vs best lower*: this "
    "row's goodput against the best of the lower client counts of its path and n, passing at %(share).0f %%."
)
