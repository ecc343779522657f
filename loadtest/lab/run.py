"""The whole lab, in order: build the jars when missing or stale, make sure ApacheBench is there, start the
services on loopback, check every path's answer, measure each path (bench), stop the services, run the bare
transports' floor on the machine they no longer share, and write results.json, summary.md and report.html.

Every process it starts is a child of this one (lab.processes) and is stopped on the way out, whether the lab
finished, failed, or was stopped with Ctrl-C or TERM.
"""

import datetime
import json
import os
import shutil
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from typing import Dict, List

from . import bench, environment, floor, http_check, open_loop, paths, repeats, report, results, services, view
from .processes import Processes, raise_on_term
from .settings import LabError, Settings

LAB_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO = os.path.dirname(LAB_DIR)
PROMETHEUS_SCRIPT = os.path.join(REPO, "monitoring", "run-prometheus.sh")


def main() -> int:
    raise_on_term()
    settings = Settings.from_env()
    results_dir = os.path.abspath(settings.results_dir or os.path.join(
        LAB_DIR, "results", datetime.datetime.now().strftime("%Y%m%d-%H%M%S")))
    if os.path.exists(os.path.join(results_dir, "results.json")):
        raise LabError("%s already holds results: choose another RESULTS_DIR" % results_dir)
    java = os.path.join(os.environ["JAVA_HOME"], "bin", "java") if os.environ.get("JAVA_HOME") else "java"
    if not shutil.which(java):
        raise LabError("java is missing: install a JDK 17 or newer "
                       "(Debian: apt-get install -y openjdk-17-jdk-headless)")
    modules = paths.services_needed(paths.ALL[p] for p in settings.paths)
    jars = services.ensure_jars(REPO, modules + ([services.FLOOR] if settings.floor else []), settings.skip_build)
    ensure_ab()
    instances = services.layout(settings, modules)
    check_ports(instances, settings)
    os.makedirs(os.path.join(results_dir, "logs"), exist_ok=True)

    with Processes() as processes:
        started = start_services(processes, instances, jars, java, settings, results_dir)
        prometheus_url = start_prometheus(processes, instances, settings, results_dir)
        cut_short = False
        try:
            status = measure(results_dir, settings, instances, started, java, prometheus_url)
        except bench.ServiceExited as error:
            # The runs measured so far are in results.json: keep them, with their summary and report.
            print("[lab] ERROR: %s" % error, file=sys.stderr)
            results.write_summary(results_dir, results.read_json(results_dir))
            status, cut_short = 1, True
        processes.stop_all()
        if settings.floor and not cut_short:
            floor_status = run_floor(results_dir, floor.Jvm(jars[services.FLOOR], java, settings.java_opts),
                                     settings, processes)
            status = status or floor_status
    try:
        # The Maven build (LAB_SKIP_BUILD=1) has fetched the report's scripts already; a user's run may fetch them.
        print("[lab] report: %s" % report.write(results_dir, fetch=not settings.skip_build))
    except report.ReportError as error:
        print("[lab] ERROR: no report.html: %s" % error, file=sys.stderr)
        print("[lab] once that is fixed: loadtest/run.sh --report %s" % results_dir, file=sys.stderr)
        status = status or 1
    print("[lab] results: %s (summary.md, results.json, report.html, raw/, logs/%s)"
          % (results_dir, ", floor/" if settings.floor else ""))
    return status


def ensure_ab() -> None:
    """ApacheBench, installed from Debian's apache2-utils when it is missing and the lab may install."""
    if shutil.which("ab"):
        return
    # As root, or through sudo when it needs no password.
    sudo = [] if os.geteuid() == 0 else ["sudo", "-n"]
    may_install = not sudo or (shutil.which("sudo") and subprocess.run(
        ["sudo", "-n", "true"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0)
    if shutil.which("apt-get") and may_install:
        print("[lab] ApacheBench (ab) is missing: installing Debian's apache2-utils", flush=True)
        apt = sudo + ["env", "DEBIAN_FRONTEND=noninteractive", "apt-get"]
        if subprocess.run(apt + ["install", "-y", "-q", "apache2-utils"], stdout=subprocess.DEVNULL).returncode != 0:
            subprocess.run(apt + ["update", "-q"], stdout=subprocess.DEVNULL)
            subprocess.run(apt + ["install", "-y", "-q", "apache2-utils"], stdout=subprocess.DEVNULL)
    if not shutil.which("ab"):
        raise LabError("ApacheBench (ab) is missing and the lab could not install it. Install it, then run again:\n"
                       "    Debian/Ubuntu: sudo apt-get install -y apache2-utils\n"
                       "    Fedora/RHEL:   sudo dnf install -y httpd-tools\n"
                       "    Alpine:        apk add apache2-utils")


def check_ports(instances: List[services.Instance], settings: Settings) -> None:
    """Fails, naming them and the knob that moves them, when a port the lab needs is taken."""
    wanted = {knob: port for instance in instances for knob, port in instance.ports.items()}
    if settings.prometheus:
        wanted["PROMETHEUS_PORT"] = settings.prometheus_port
    taken = {knob: port for knob, port in wanted.items() if http_check.port_taken(port)}
    if not taken:
        return
    lines = ["port %d (%s) is already in use on 127.0.0.1.%s" % (port, knob, http_check.holder(port))
             for knob, port in taken.items()]
    # A replica's port is named KNOB+offset: the knob to move is KNOB itself.
    moved = {}
    for knob, port in taken.items():
        base, _, offset = knob.partition("+")
        moved.setdefault(base, port - int(offset or 0) + 10000)
    lines.append("Stop what holds it, or give the lab other ports, e.g. %s loadtest/run.sh"
                 % " ".join("%s=%d" % item for item in moved.items()))
    raise LabError("\n[lab] ".join(lines))


def start_services(processes: Processes, instances: List[services.Instance], jars: Dict[str, str], java: str,
                   settings: Settings, results_dir: str) -> List[bench.Service]:
    """Starts the square services, then, once they answer UP, the aggregator (as compose and Kubernetes do: its
    channel connects at start-up); the running services, replicas grouped."""
    pids: Dict[str, List[int]] = {}
    squares = [i for i in instances if i.module != paths.AGGREGATOR]
    for group in (squares, [i for i in instances if i.module == paths.AGGREGATOR]):
        if not group:
            continue
        waiting = []
        for instance in group:
            log_path = os.path.join(results_dir, "logs", instance.name + ".log")
            print("[lab] starting %s (log: %s)" % (instance.name, log_path), flush=True)
            child = processes.start([java] + settings.java_opts.split() + ["-jar", jars[instance.module]]
                                    + instance.arguments, log_path=log_path)
            pids.setdefault(instance.module, []).append(child.pid)
            waiting.append((instance.name, child.pid, instance.actuator + "/health"))
        print("[lab] waiting up to %ds for %s to be healthy" % (
            settings.health_timeout_s, " ".join(name for name, _, _ in waiting)), flush=True)
        problem = http_check.wait_healthy(waiting, settings.health_timeout_s)
        if problem:
            log_file = os.path.join(results_dir, "logs", problem.service + ".log")
            raise LabError("%s\n[lab] the end of %s:\n%s%s" % (
                problem.message, log_file, floor.tail(log_file, 40).replace("; ", "\n"),
                "\n[lab] on a busy machine, give them longer with HEALTH_TIMEOUT (now %d s)"
                % settings.health_timeout_s))
    first = {}
    for instance in instances:
        first.setdefault(instance.module, instance)
    return [bench.Service(module, pids[module], first[module].base_url,
                          [i.actuator + "/prometheus" for i in instances if i.module == module])
            for module in pids]


def start_prometheus(processes: Processes, instances: List[services.Instance], settings: Settings,
                     results_dir: str):
    """PROMETHEUS=1: a real Prometheus beside the run, scraping the lab's ports; its URL, or None."""
    if not settings.prometheus:
        return None
    first = {}
    for instance in instances:
        first.setdefault(instance.module, instance.actuator.split("/")[2])
    log_path = os.path.join(results_dir, "prometheus.log")
    print("[lab] starting Prometheus on 127.0.0.1:%d (log: %s)" % (settings.prometheus_port, log_path), flush=True)
    env = dict(os.environ, AGGREGATOR_ADDRESS=first.get(paths.AGGREGATOR, ""),
               SQUARE_REST_ADDRESS=first.get(paths.SQUARE_REST, ""),
               SQUARE_GRPC_ACTUATOR_ADDRESS=first.get(paths.SQUARE_GRPC, ""))
    child = processes.start(["bash", PROMETHEUS_SCRIPT, "--port", str(settings.prometheus_port),
                             "--listen-address", "127.0.0.1"], log_path=log_path, env=env)
    url = "http://127.0.0.1:%d" % settings.prometheus_port
    deadline = time.monotonic() + 60
    while not _ready(url + "/-/ready"):
        if child.poll() is not None or time.monotonic() > deadline:
            raise LabError("Prometheus did not start (see %s; PROMETHEUS=0 runs the lab without it)" % log_path)
        time.sleep(0.5)
    print("[lab] Prometheus: %s (targets: %s/classic/targets); e.g. requests per second per transport:" % (url, url))
    print("[lab]   %s/classic/graph?g0.expr=%s" % (url, urllib.parse.quote(
        "sum by (transport) (rate(aggregator_fanout_seconds_count[1m]))")), flush=True)
    return url


def _ready(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


def aggregator_settings(instances: List[services.Instance]) -> Dict:
    """The running aggregator's own account of the settings that shape its load (GET /actuator/info)."""
    aggregator = next((i for i in instances if i.module == paths.AGGREGATOR), None)
    if aggregator is None:
        return None
    try:
        with urllib.request.urlopen(aggregator.actuator + "/info", timeout=10) as response:
            return floor.aggregator_settings(json.load(response))
    except (OSError, ValueError) as error:
        raise LabError("cannot read the aggregator's settings from %s/info: %s"
                       % (aggregator.actuator, error)) from None


def measure(results_dir: str, settings: Settings, instances: List[services.Instance],
            started: List[bench.Service], java: str, prometheus_url) -> int:
    """Checks every answer, then measures every combination; writes results.json and summary.md."""
    run_results = {
        "environment": environment.describe(REPO, java, settings.java_opts),
        "settings": dict(settings.as_dict(),
                         aggregator=aggregator_settings(instances),
                         aggregator_args=" ".join(services.aggregator_arguments(settings)),
                         **load_command(settings),
                         endpoints={s.name: s.base_url for s in started if s.base_url},
                         metrics_endpoints={s.name: ",".join(s.metrics_urls) for s in started},
                         prometheus_url=prometheus_url),
        "started_at": _now(),
        "finished_at": None,
        "runs": [],
    }
    if settings.open_loop:
        run_results["environment"]["load_generator"] = "Vegeta %s" % open_loop.VEGETA_VERSION
    raw_dir = os.path.join(results_dir, "raw")
    os.makedirs(raw_dir, exist_ok=True)
    results.write_json(results_dir, run_results)
    wrong = _verify(settings, started)
    if wrong:
        raise LabError("a path answers wrongly, so the lab measures nothing:\n  " + "\n  ".join(wrong))

    combos = settings.combinations()
    vegeta = open_loop.ensure_vegeta() if settings.open_loop else None
    measured: Dict[tuple, List[Dict]] = {combo: [] for combo in combos}
    point_name = "rate" if settings.open_loop else "concurrency"
    # Interleaved: round r measures every combination once, so that the machine's drift hits all of them alike.
    for repeat in range(1, settings.repeats + 1):
        for index, (name, n, point) in enumerate(combos, 1):
            print("[lab] round %d/%d, run %d/%d: %s n=%d %s=%d" % (
                repeat, settings.repeats, index, len(combos), name, n, point_name, point), flush=True)
            if repeat == 1:
                bench.warm_up(paths.ALL[name], n, point, settings, started, raw_dir, log=_log, vegeta=vegeta)
            record = bench.measure(paths.ALL[name], n, point, settings, started, raw_dir, repeat, log=_log,
                                   vegeta=vegeta)
            measured[(name, n, point)].append(record)
            _print_outcome(record)
            # Rewritten after every repeat: an interrupted lab still leaves the runs it measured so far.
            run_results["runs"] = [repeats.combine(records, bench.repeat_summary)
                                   for records in measured.values() if records]
            results.write_json(results_dir, run_results)
    run_results["finished_at"] = _now()
    results.write_json(results_dir, run_results)
    results.write_summary(results_dir, run_results)
    tables = view.view(run_results)["tables"]
    print()
    print(results.markdown(tables["runs"]))
    if tables["server_side"]:
        print("Server side (the services' own metrics over each measured run; ≤: an upper bound):")
        print(results.markdown(tables["server_side"]))
    troubled = [run for run in run_results["runs"] if results.problems(run)]
    if troubled:
        print("[lab] ERROR: %d of %d runs had failures (see summary.md); their figures are not comparable."
              % (len(troubled), len(combos)), file=sys.stderr)
        return 1
    return 0


def run_floor(results_dir: str, jvm: floor.Jvm, settings: Settings, processes: Processes) -> int:
    """The bare transports, once the services are stopped: the whole machine, with the services' JVM options."""
    print("[lab] the transport floor: the bare transports, no Spring, with the aggregator's window "
          "(services stopped)", flush=True)
    data = results.read_json(results_dir)
    windows, _ = floor.plan(data["settings"])
    if not windows:
        print("[lab] floor: no measured path has a bare transport to compare with (rest/square is a baseline, "
              "and n=0 makes no downstream call)", flush=True)
    started = _now()
    records = floor.measure(results_dir, data, jvm, settings.warmup_s, settings.floor_duration_s, processes,
                            settings.repeats)
    floor.attach(data, records, extra={"started_at": started, "finished_at": _now(), "java_opts": jvm.java_opts,
                                       "jar": jvm.jar})
    results.write_json(results_dir, data)
    results.write_summary(results_dir, data)
    table = view.floor_table(data)
    if table and table["rows"]:
        print()
        print("Transport floor (each path's downstream calls/s against its bare transport's; goal: at least %d %%):"
              % round(floor.GOAL * 100))
        print(results.markdown(table))
    failed = [record for record in records if "error" in record]
    if failed:
        print("[lab] ERROR: %d of %d floor runs failed, so their paths have no fraction of floor (see summary.md)."
              % (len(failed), len(records)), file=sys.stderr)
        return 1
    return 0


def _verify(settings: Settings, started: List[bench.Service]) -> List[str]:
    """Checks every path at every n against the exact expected body before anything is measured."""
    base_urls = {s.name: s.base_url for s in started if s.base_url}
    wrong = []
    for name in settings.paths:
        path = paths.ALL[name]
        for n in settings.n:
            print("[lab] checking %s n=%d answers correctly" % (name, n), flush=True)
            problem = http_check.answer_mismatch(path, path.url(base_urls, n), n, settings.ab_timeout_s)
            if problem:
                wrong.append(problem)
    return wrong


def load_command(settings: Settings) -> Dict:
    """How each measured run sends its load, as results.json records it."""
    if settings.open_loop:
        return {"vegeta_command": "echo 'GET <url>' | vegeta attack -rate=<rate>/1s -duration=%gs -timeout=%ds"
                                  % (settings.duration_s, settings.ab_timeout_s), "keep_alive": True}
    return {"ab_command": "ab -n %d -c <concurrency> -s %d -q -r -e <csv> <url>"
                          % (settings.requests, settings.ab_timeout_s), "keep_alive": False}


def _print_outcome(run) -> None:
    found = results.problems(run)
    if "error" in run:
        _log("ERROR: " + run["error"])
        return
    latency = run["latency_ms"]
    _log("%.2f req/s, p50 %s ms, p99 %s ms, failed %d%s%s" % (
        run["rps"], latency["p50"], latency["p99"], run["failed"],
        ", errors %s" % run["errors"] if run.get("errors") else "", "  <- " + "; ".join(found) if found else ""))
    side = run.get("server_side") or {}
    if "error" in side:
        _log("warning: " + side["error"])
    elif side:
        _log("server side: %s square calls served, %s downstream calls made"
             % (side.get("square_calls"), side.get("downstream_calls", "-")))


def _log(message: str) -> None:
    print("  " + message.strip(), flush=True)


def _now() -> str:
    return datetime.datetime.now().astimezone().isoformat(timespec="seconds")
