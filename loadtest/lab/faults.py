"""Network faults under load: `python3 -m lab faults` (loadtest/run.sh --faults).

Starts the square services and the aggregator as the lab does, with Toxiproxy between the aggregator and every
square-service replica (NETWORK=proxy), and runs a steady closed-loop load on every path at once while it puts each
fault on every proxy for a while, then takes it off and lets the services settle. It reports, per fault and path, the
answers by kind, the longest answer, the requests open when the fault cleared and how long goodput took to come back
(lab.fault_figures), and checks the issue's promises: every answer an exact 200, or a 503 or 504 with a problem body,
within the aggregator's deadline; goodput back within --recovery-limit seconds of each fault clearing; and nothing
leaked: the aggregator's admission and in-flight gauges back to 0 once the load stops, and its heap after a full
collection within 10 % of what it was before the faults. It writes faults.json and faults.md into the results folder
and exits 1 when a promise was broken.

All paths run at once, not one after the other: a fault hits the network, which every path shares, so one timeline
shows each path's answer to the same fault beside the others', in a fifth of the time.
"""

import argparse
import csv
import datetime
import os
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from typing import Dict, List, Optional

from . import (
    catalogue,
    environment,
    fault_figures,
    http_check,
    network,
    results,
    server_metrics,
    services,
    stacks,
    stage,
    tools,
)
from .deadlines import Deadlines
from .errors import LabError, MetricsError, exit_status
from .fault_figures import Limits, Phase
from .fault_load import Answer, Load
from .processes import Processes, Watched, check_alive, raise_on_term, wait_until
from .settings import Settings

LAB_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO = os.path.dirname(LAB_DIR)
# The heap after a full collection may grow this much over the faults before it counts as a leak.
HEAP_GROWTH = 0.10
# Requests a second on each path: with five paths at n = 50 on two cores, a tenth to a half of what each served beside
# the others in a closed loop.
DEFAULT_RATE = 10.0


@dataclass(frozen=True)
class Fault:
    name: str
    toxic: str
    description: str


FAULTS = {
    fault.name: fault
    for fault in (
        Fault("reset", "reset_peer", "every connection reset (TCP RST) as soon as a byte arrives, new ones too"),
        Fault(
            "blackhole",
            "timeout",
            "every byte dropped both ways, connections left open until it clears (timeout toxic, timeout 0)",
        ),
        Fault("latency", "latency", "every answer from the square services delayed (latency toxic, downstream)"),
        Fault("bandwidth", "bandwidth", "every connection slowed to a trickle both ways (bandwidth toxic)"),
    )
}


def toxics(fault: Fault, latency_ms: int, rate_kb_s: int) -> List[Dict]:
    """Toxiproxy's toxics of one fault, for every proxy."""
    if fault.name == "latency":
        # One direction only: every round trip takes latency_ms longer.
        return [_toxic(fault, "downstream", latency=latency_ms)]
    attributes = {"reset": {"timeout": 0}, "blackhole": {"timeout": 0}, "bandwidth": {"rate": rate_kb_s}}[fault.name]
    return [_toxic(fault, direction, **attributes) for direction in catalogue.DIRECTIONS]


def _toxic(fault: Fault, direction: str, **attributes) -> Dict:
    return {
        "name": "%s_%s" % (fault.name, direction),
        "type": fault.toxic,
        "stream": direction,
        "toxicity": 1.0,
        "attributes": attributes,
    }


def parser() -> argparse.ArgumentParser:
    found = argparse.ArgumentParser(
        prog="loadtest/run.sh --faults",
        description="Network faults under load: Toxiproxy between the aggregator and the square services, a steady "
        "load on every path, and each fault in turn; exits 1 when an answer was not a 200, 503 or 504 "
        "with a problem body within the deadline, goodput did not come back in time, or something "
        "leaked. The lab's environment knobs (ports, JAVA_OPTS, AGGREGATOR_ARGS, REST_SERVER, "
        "REST_CLIENT, REPLICAS, HEALTH_TIMEOUT, LAB_SKIP_BUILD, RESULTS_DIR) hold here too.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    found.add_argument("--paths", default=catalogue.DEFAULT, help="the paths loaded, all at once")
    found.add_argument("--n", type=int, default=50, help="squares per request")
    found.add_argument("--clients", type=int, default=3, help="clients per path")
    found.add_argument(
        "--rate",
        type=float,
        default=DEFAULT_RATE,
        help="requests a second on each path, shared by its clients, well below what each path serves "
        "beside the others, so that a healthy path's goodput is its rate; 0: each client as fast "
        "as its answers come (a closed loop, whose paths trade their shares of the CPU)",
    )
    found.add_argument(
        "--faults",
        default=" ".join(FAULTS),
        help="the faults, in this order: "
        + ", ".join("%s (%s)" % (fault.name, fault.description) for fault in FAULTS.values()),
    )
    found.add_argument("--fault-seconds", type=float, default=5.0, help="how long each fault lasts")
    found.add_argument(
        "--settle-seconds", type=float, default=10.0, help="load without a fault before the first fault and after each"
    )
    found.add_argument(
        "--warmup-seconds", type=float, default=5.0, help="load before the heap is measured and the steady load begins"
    )
    found.add_argument(
        "--deadline",
        type=int,
        default=5,
        help="the aggregator's aggregator.deadline for the run, in seconds (unless AGGREGATOR_ARGS "
        "sets it). A request caught by a black hole answers 504 at its deadline, so goodput "
        "can only be back within the recovery limit when deadline <= fault + limit",
    )
    found.add_argument(
        "--grace",
        type=float,
        default=1.0,
        help="seconds an answer may take beyond the deadline (the trip to the client and back)",
    )
    found.add_argument(
        "--recovery-limit",
        type=float,
        default=5.0,
        help="seconds after a fault clears within which goodput must be back to 90 %% of before",
    )
    found.add_argument(
        "--recovered-share",
        type=float,
        default=fault_figures.RECOVERED_SHARE,
        help="the share of the goodput before a fault that counts as back (CI's small run, whose "
        "goodput still climbs with the JIT, asks less)",
    )
    found.add_argument("--latency-ms", type=int, default=2000, help="the latency fault's delay")
    found.add_argument("--rate-kb", type=int, default=1, help="the bandwidth fault's rate, KB/s each way")
    return found


def parse(argv: Optional[List[str]]) -> argparse.Namespace:
    given = parser()
    options = given.parse_args(argv)
    try:
        options.path_names = [path.name for path in catalogue.parse(options.paths)]
    except ValueError as error:
        given.error(str(error))
    if any(catalogue.ALL[name].target != catalogue.AGGREGATOR for name in options.path_names):
        given.error("--paths: only the aggregator's paths go through the network the faults hit")
    options.fault_names = options.faults.split()
    unknown = [name for name in options.fault_names if name not in FAULTS]
    if unknown or not options.fault_names:
        given.error("--faults: unknown fault %s; known: %s" % (" ".join(unknown) or "(none given)", " ".join(FAULTS)))
    for name in ("n", "clients", "deadline", "latency_ms", "rate_kb"):
        if getattr(options, name) < 1:
            given.error("--%s must be at least 1" % name.replace("_", "-"))
    for name in ("fault_seconds", "settle_seconds", "recovery_limit"):
        if getattr(options, name) <= 0:
            given.error("--%s must be more than 0" % name.replace("_", "-"))
    if not 0 < options.recovered_share <= 1:
        given.error("--recovered-share must be above 0 and at most 1")
    if options.warmup_seconds < 0 or options.grace < 0 or options.rate < 0:
        given.error("--warmup-seconds, --grace and --rate must not be negative")
    if options.settle_seconds < options.recovery_limit + 1:
        given.error("--settle-seconds must be at least --recovery-limit + 1, so that a recovery can be seen")
    return options


def main(argv: Optional[List[str]] = None) -> int:
    options = parse(argv)
    raise_on_term()
    return exit_status(lambda: run(options))


def run(options: argparse.Namespace) -> int:
    settings = Settings.from_env(
        dict(os.environ, NETWORK="proxy", FLOOR="0", TLS="off", PATHS=" ".join(options.path_names))
    )
    results_dir = os.path.abspath(
        settings.results_dir
        or os.path.join(LAB_DIR, "results", "faults-" + datetime.datetime.now().strftime("%Y%m%d-%H%M%S"))
    )
    if os.path.exists(os.path.join(results_dir, "faults.json")):
        raise LabError("%s already holds a fault run: choose another RESULTS_DIR" % results_dir)
    stack = stacks.resolve(settings, tools.java())[0]
    jcmd = tools.jcmd(stack.jdk.java, "the fault run reads the aggregator's heap after a full GC with it")
    modules = catalogue.services_needed(catalogue.ALL[name] for name in options.path_names)
    jars = tools.ensure_jars(REPO, modules, settings.skip_build)
    toxiproxy = tools.ensure_toxiproxy()
    instances = services.layout(settings, modules)
    from .run import check_ports

    check_ports(instances, settings)
    os.makedirs(os.path.join(results_dir, "logs"), exist_ok=True)
    limits = Deadlines(options.deadline, None, options.deadline, "--deadline of the fault run")
    record = {
        "environment": environment.describe(REPO, stack.jdk.java, settings.java_opts),
        "settings": settings_record(options, settings, stack),
        "started_at": results.now(),
    }
    with Processes() as processes:
        lab_stage = stage.Stage(processes, settings, instances, jars, results_dir)
        lab_stage.start_proxy(toxiproxy)
        lab_stage.start_squares(stack)
        with lab_stage.aggregator_on(catalogue.PROFILES["proxy"], limits) as started:
            aggregator = next(service for service in started if service.name == catalogue.AGGREGATOR)
            watched = [process for service in started for process in service.watched]
            record.update(exercise(options, lab_stage, aggregator, jcmd, watched))
    record["finished_at"] = results.now()
    return report(results_dir, record)


def settings_record(options: argparse.Namespace, settings: Settings, stack: stacks.Stack) -> Dict:
    return {
        "paths": options.path_names,
        "n": options.n,
        "clients_per_path": options.clients,
        "rate_per_path": options.rate or None,
        "faults": {
            name: {
                "description": FAULTS[name].description,
                "toxics": toxics(FAULTS[name], options.latency_ms, options.rate_kb),
            }
            for name in options.fault_names
        },
        "fault_s": options.fault_seconds,
        "settle_s": options.settle_seconds,
        "warmup_s": options.warmup_seconds,
        "deadline_s": options.deadline,
        "grace_s": options.grace,
        "recovery_limit_s": options.recovery_limit,
        "recovered_share": options.recovered_share,
        "heap_growth_limit": HEAP_GROWTH,
        "java_opts": settings.java_opts,
        "aggregator_args": settings.aggregator_args,
        "stack": stack.label,
    }


def exercise(
    options: argparse.Namespace, lab_stage: stage.Stage, aggregator, jcmd: str, watched: List[Watched]
) -> Dict:
    """The run itself, with the services up: checks, warm-up, heap, steady load, the faults, drain, heap again."""
    base_url = aggregator.base_url
    metrics_url = aggregator.metrics_urls[0]
    pid = aggregator.pids[0]
    info = (lab_stage.aggregator_info() or {}).get("aggregator") or {}
    deadline_s = (info.get("deadline-ms") or options.deadline * 1000) / 1000
    timeout_s = deadline_s + options.grace + 10
    for name in options.path_names:
        path = catalogue.ALL[name]
        print("[lab] checking %s n=%d answers correctly" % (name, options.n), flush=True)
        problem = http_check.answer_mismatch(
            path, path.url({catalogue.AGGREGATOR: base_url}, options.n), options.n, timeout_s
        )
        if problem:
            raise LabError("a path answers wrongly before any fault, so the lab measures nothing:\n  " + problem)
    if options.warmup_seconds:
        print(
            "[lab] warming up: %d clients on each path for %g s" % (options.clients, options.warmup_seconds), flush=True
        )
        warm = Load(base_url, options.path_names, options.n, options.clients, timeout_s)
        warm.start()
        time.sleep(options.warmup_seconds)
        warm.stop()
    histogram = os.path.join(lab_stage.results_dir, "heap-histogram-%s.txt")
    before = {
        "gauges": drained(metrics_url, timeout_s),
        "heap": heap_after_gc(jcmd, pid, metrics_url, histogram % "before"),
    }
    print("[lab] heap after a full GC before the faults: %.1f MiB" % (before["heap"]["used_bytes"] / 2**20), flush=True)

    load = Load(base_url, options.path_names, options.n, options.clients, timeout_s, options.rate)
    print(
        "[lab] steady load: %d clients on each of %s, n=%d, %s"
        % (
            options.clients,
            " ".join(options.path_names),
            options.n,
            "%g requests a second each" % options.rate if options.rate else "each as fast as its answers come",
        ),
        flush=True,
    )
    load.start()
    origin = time.monotonic()
    try:
        marks = apply_faults(options, lab_stage.proxy, watched)
    except BaseException:
        # A service that died, or Ctrl-C: the clients stop before the services do.
        load.stop()
        raise
    print("[lab] stopping the load; waiting for the requests under way", flush=True)
    hung = load.stop()
    stopped = time.monotonic()
    check_alive(watched, "the fault run")
    after = {
        "gauges": drained(metrics_url, timeout_s),
        "heap": heap_after_gc(jcmd, pid, metrics_url, histogram % "after"),
    }
    print("[lab] heap after a full GC after the faults: %.1f MiB" % (after["heap"]["used_bytes"] / 2**20), flush=True)

    phases = [Phase(fault_figures.STEADY, origin, None, marks[0][1])]
    for index, (name, started, cleared) in enumerate(marks):
        ends = marks[index + 1][1] if index + 1 < len(marks) else stopped
        phases.append(Phase(name, started, cleared, ends))
    limits = Limits(deadline_s, options.grace, options.recovery_limit, recovered_share=options.recovered_share)
    figures = fault_figures.rows(phases, options.path_names, load.answers, limits)
    write_answers(os.path.join(lab_stage.results_dir, "answers.csv"), load.answers, origin)
    return {
        "aggregator_deadline_s": deadline_s,
        "limits": asdict(limits),
        "timeline": [
            {
                "phase": p.name,
                "started_s": _since(origin, p.started),
                "cleared_s": None if p.cleared is None else _since(origin, p.cleared),
                "ends_s": _since(origin, p.ends),
            }
            for p in phases
        ],
        "rows": figures,
        "hung_clients": hung,
        "before": before,
        "after": after,
        "answers": len(load.answers),
    }


def apply_faults(options: argparse.Namespace, toxiproxy: network.Toxiproxy, watched: List[Watched]) -> List:
    """The steady load's settling, then each fault on every proxy and the settling after it; (name, when its toxics
    were in place, when they were off) of each."""
    marks = []
    time.sleep(options.settle_seconds)
    for name in options.fault_names:
        fault = FAULTS[name]
        print("[lab] fault %s for %g s: %s" % (name, options.fault_seconds, fault.description), flush=True)
        toxiproxy.set_toxics(toxics(fault, options.latency_ms, options.rate_kb))
        started = time.monotonic()
        time.sleep(options.fault_seconds)
        toxiproxy.set_toxics([])
        marks.append((name, started, time.monotonic()))
        time.sleep(options.settle_seconds)
        check_alive(watched, "the fault run, after the %s fault" % name)
    return marks


def write_answers(target: str, answers: List[Answer], origin: float) -> None:
    """Every answer of the steady load and the faults, in seconds from the load's start: to chart or dig into."""
    with open(target, "w", newline="") as handle:
        out = csv.writer(handle)
        out.writerow(["path", "sent_s", "answered_s", "kind", "detail"])
        for answer in sorted(answers, key=lambda a: a.answered):
            out.writerow(
                [
                    answer.path,
                    "%.3f" % (answer.sent - origin),
                    "%.3f" % (answer.answered - origin),
                    answer.kind,
                    answer.detail,
                ]
            )


def drained(metrics_url: str, wait_s: float) -> Dict:
    """The aggregator's admission and in-flight gauges, read until every one is 0 or wait_s has passed."""
    began = time.monotonic()
    readings: List[Dict[str, float]] = []

    def idle() -> bool:
        readings.append(work_gauges(_scrape(metrics_url)))
        return not any(readings[-1].values())

    zero = wait_until(idle, wait_s, 0.5)
    return {"values": readings[-1], "zero": zero, "waited_s": round(time.monotonic() - began, 1)}


def work_gauges(samples: List[server_metrics.Sample]) -> Dict[str, float]:
    """The aggregator's gauges of work under way by name (server_metrics.WORK_GAUGES, each summed over its
    transports); a LabError when it exposes no in-flight gauge or none of the admission ones."""
    found = server_metrics.work_gauges(samples)
    if server_metrics.IN_FLIGHT_GAUGE not in found or not set(found) & set(server_metrics.ADMISSION_WORK_GAUGES):
        raise LabError(
            "the aggregator's /actuator/prometheus has no %s, or none of %s: the lab cannot tell whether "
            "work is left over" % (server_metrics.IN_FLIGHT_GAUGE, ", ".join(server_metrics.ADMISSION_WORK_GAUGES))
        )
    return found


def heap_after_gc(jcmd: str, pid: int, metrics_url: str, histogram_path: str) -> Dict:
    """The aggregator's heap in use right after two full collections (jcmd GC.run), from its own
    jvm_memory_used_bytes{area="heap"}; the classes that hold it (GC.class_histogram) into histogram_path, so that
    growth can be traced to what grew."""
    for _ in range(2):
        _jcmd(jcmd, pid, "GC.run")
    used = server_metrics.total(_scrape(metrics_url), "jvm_memory_used_bytes", area="heap")
    with open(histogram_path, "w") as handle:
        handle.write(_jcmd(jcmd, pid, "GC.class_histogram"))
    return {
        "used_bytes": int(used),
        "how": 'jcmd GC.run twice, then jvm_memory_used_bytes{area="heap"}',
        "class_histogram": os.path.basename(histogram_path),
    }


def _jcmd(jcmd: str, pid: int, command: str) -> str:
    done = subprocess.run(
        [jcmd, str(pid), command], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120
    )
    if done.returncode != 0:
        raise LabError("jcmd %d %s failed: %s" % (pid, command, done.stdout.strip()))
    return done.stdout


def checks(record: Dict) -> Dict[str, List[str]]:
    """Each requirement and how the run missed it (an empty list: met)."""
    limits = Limits(**record["limits"])
    per_row = fault_figures.failures(record["rows"], limits)
    answers = [f for f in per_row if "goodput" not in f]
    if record["hung_clients"]:
        answers.append(
            "%d clients were still waiting for an answer %g s after the load stopped: %s"
            % (len(record["hung_clients"]), limits.deadline_s + limits.grace_s, " ".join(record["hung_clients"]))
        )
    leaks = [
        "after the load stopped, %s stayed at %s (not 0) for %g s"
        % (name, value, record["after"]["gauges"]["waited_s"])
        for name, value in record["after"]["gauges"]["values"].items()
        if value
    ]
    before, after = record["before"]["heap"]["used_bytes"], record["after"]["heap"]["used_bytes"]
    if after > before * (1 + HEAP_GROWTH):
        leaks.append(
            "the heap after a full GC grew from %.1f MiB before the faults to %.1f MiB after (+%.0f %%, "
            "more than %d %%)" % (before / 2**20, after / 2**20, 100 * (after / before - 1), round(HEAP_GROWTH * 100))
        )
    return {
        "answers_within_deadline": answers,
        "goodput_recovers": [f for f in per_row if "goodput" in f],
        "nothing_leaks": leaks,
    }


def report(results_dir: str, record: Dict) -> int:
    """Writes faults.json and faults.md, prints the table and the verdict; 0 when every requirement holds."""
    found = checks(record)
    record["checks"] = {name: {"passed": not missed, "failures": missed} for name, missed in found.items()}
    record["passed"] = not any(found.values())
    results.write_json(results_dir, record, name="faults.json")
    text = summary(record)
    with open(os.path.join(results_dir, "faults.md"), "w") as handle:
        handle.write(text)
    print()
    print(text)
    print("[lab] results: %s (faults.json, faults.md, answers.csv, heap-histogram-*.txt, logs/)" % results_dir)
    if not record["passed"]:
        print(
            "[lab] ERROR: the faults broke a requirement:\n  %s"
            % "\n  ".join(failure for missed in found.values() for failure in missed),
            file=sys.stderr,
        )
        return 1
    return 0


def _pace(settings: Dict) -> str:
    rate = settings.get("rate_per_path")
    return "%g requests a second on each path" % rate if rate else "each client as fast as its answers come"


def summary(record: Dict) -> str:
    """faults.md: what ran, the table, the leak figures and each requirement's verdict."""
    settings = record["settings"]
    before, after = record["before"], record["after"]
    lines = [
        "# Network faults under load",
        "",
        "%d clients on each of %s at n=%d, all at once, %s; each fault for %g s on every proxy between the "
        "aggregator and the square services, %g s of load without a fault before the first and after each; "
        "the aggregator's deadline %g s."
        % (
            settings["clients_per_path"],
            ", ".join(settings["paths"]),
            settings["n"],
            _pace(settings),
            settings["fault_s"],
            settings["settle_s"],
            record["aggregator_deadline_s"],
        ),
        "",
        fault_figures.table(record["rows"]),
        "Answers count in the phase in which they came; *open at clear*: requests sent before the fault cleared "
        "and answered after; *back to 90 %% after*: seconds from the fault clearing to the first %g s window "
        "whose goodput was at least 90 %% of the %g s before the fault."
        % (record["limits"]["window_s"], record["limits"]["before_s"]),
        "",
        "Heap after a full GC: %.1f MiB before the faults, %.1f MiB after. Gauges of work under way after the "
        "load stopped: %s (after %g s)."
        % (
            before["heap"]["used_bytes"] / 2**20,
            after["heap"]["used_bytes"] / 2**20,
            ", ".join("%s %g" % item for item in after["gauges"]["values"].items()),
            after["gauges"]["waited_s"],
        ),
        "",
    ]
    for name, verdict in record["checks"].items():
        lines.append("- %s: %s" % (name.replace("_", " "), "passed" if verdict["passed"] else "FAILED"))
        lines += ["  - " + failure for failure in verdict["failures"]]
    return "\n".join(lines) + "\n"


def _scrape(metrics_url: str) -> List[server_metrics.Sample]:
    try:
        return server_metrics.scrape(metrics_url)
    except MetricsError as error:
        raise LabError("the aggregator's metrics: %s" % error) from None


def _since(origin: float, moment: float) -> float:
    return round(moment - origin, 2)


if __name__ == "__main__":
    sys.exit(main())
