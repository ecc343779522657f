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
import os
import time
from dataclasses import asdict, dataclass
from typing import Dict, List

from ..core import catalogue, metrics
from ..core.errors import LabError
from ..host import jvm, tools
from ..host.processes import Watched, check_alive
from ..load import http_check
from ..load.client import Answer, Load
from ..measure.idle import wait_idle
from ..results import results
from ..stage import network, stage
from ..stage.deadlines import Deadlines
from . import base, fault_figures
from .fault_figures import Limits, Phase

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


class Faults(base.Experiment):
    name = "faults"
    about = (
        "Network faults under load: Toxiproxy between the aggregator and the square services, a steady load on "
        "every path, and each fault in turn; exits 1 when an answer was not a 200, 503 or 504 with a problem body "
        "within the deadline, goodput did not come back in time, or something leaked"
    )
    document = "faults.json"
    summary = "faults.md.j2"
    prefix = "faults-"

    @classmethod
    def add_options(cls, parser: argparse.ArgumentParser) -> None:
        base.paths_option(parser, help="the paths loaded, all at once")
        parser.add_argument("--n", type=int, default=50, help="squares per request")
        parser.add_argument("--clients", type=int, default=3, help="clients per path")
        parser.add_argument(
            "--rate",
            type=float,
            default=DEFAULT_RATE,
            help="requests a second on each path, shared by its clients, well below what each path serves beside "
            "the others, so that a healthy path's goodput is its rate; 0: each client as fast as its answers come "
            "(a closed loop, whose paths trade their shares of the CPU)",
        )
        parser.add_argument(
            "--faults",
            default=" ".join(FAULTS),
            help="the faults, in this order: "
            + ", ".join("%s (%s)" % (fault.name, fault.description) for fault in FAULTS.values()),
        )
        parser.add_argument("--fault-seconds", type=float, default=5.0, help="how long each fault lasts")
        parser.add_argument(
            "--settle-seconds", type=float, default=10.0, help="load without a fault before the first and after each"
        )
        parser.add_argument(
            "--warmup-seconds", type=float, default=5.0, help="load before the heap is measured and the load begins"
        )
        parser.add_argument(
            "--deadline",
            type=int,
            default=5,
            help="the aggregator's aggregator.deadline for the run, in seconds (unless AGGREGATOR_ARGS sets it). A "
            "request caught by a black hole answers 504 at its deadline, so goodput can only be back within the "
            "recovery limit when deadline <= fault + limit",
        )
        parser.add_argument(
            "--grace", type=float, default=1.0, help="seconds an answer may take beyond the deadline (the trip back)"
        )
        parser.add_argument(
            "--recovery-limit",
            type=float,
            default=5.0,
            help="seconds after a fault clears within which goodput must be back to 90 %% of before",
        )
        parser.add_argument(
            "--recovered-share",
            type=float,
            default=fault_figures.RECOVERED_SHARE,
            help="the share of the goodput before a fault that counts as back (CI's small run, whose goodput still "
            "climbs with the JIT, asks less)",
        )
        parser.add_argument("--latency-ms", type=int, default=2000, help="the latency fault's delay")
        parser.add_argument("--rate-kb", type=int, default=1, help="the bandwidth fault's rate, KB/s each way")

    @classmethod
    def checked(cls, options: argparse.Namespace, error) -> None:
        options.path_names = base.path_names(options, error)
        options.fault_names = options.faults.split()
        unknown = [name for name in options.fault_names if name not in FAULTS]
        if unknown or not options.fault_names:
            error("--faults: unknown fault %s; known: %s" % (" ".join(unknown) or "(none given)", " ".join(FAULTS)))
        for name in ("n", "clients", "deadline", "latency_ms", "rate_kb"):
            if getattr(options, name) < 1:
                error("--%s must be at least 1" % name.replace("_", "-"))
        for name in ("fault_seconds", "settle_seconds", "recovery_limit"):
            if getattr(options, name) <= 0:
                error("--%s must be more than 0" % name.replace("_", "-"))
        if not 0 < options.recovered_share <= 1:
            error("--recovered-share must be above 0 and at most 1")
        if options.warmup_seconds < 0 or options.grace < 0 or options.rate < 0:
            error("--warmup-seconds, --grace and --rate must not be negative")
        if options.settle_seconds < options.recovery_limit + 1:
            error("--settle-seconds must be at least --recovery-limit + 1, so that a recovery can be seen")

    def measure(self, out: str) -> Dict:
        options = self.options
        settings = base.lab_settings(
            network=["proxy"], floor=False, tls=[catalogue.PLAINTEXT], paths=options.path_names
        )
        prepared = base.prepare(settings, options.path_names)
        toxiproxy = tools.ensure_toxiproxy()
        record = {
            "environment": prepared.describe(),
            "settings": self.settings_record(prepared),
            "started_at": results.now(),
        }
        limits = Deadlines(options.deadline, None, options.deadline, "--deadline of the fault run")
        with base.services_up(prepared, out, limits, "proxy", toxiproxy) as (lab_stage, started):
            watched = [process for service in started for process in service.watched]
            record.update(self.exercise(lab_stage, base.aggregator_of(started), watched, out))
        return record

    def settings_record(self, prepared: base.Prepared) -> Dict:
        options = self.options
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
            "java_opts": prepared.settings.java_opts,
            "aggregator_args": prepared.settings.aggregator_args,
            "stack": prepared.stack.label,
        }

    def exercise(self, lab_stage: stage.Stage, aggregator, watched: List[Watched], out: str) -> Dict:
        """The run itself, with the services up: checks, warm-up, heap, steady load, the faults, drain, heap again."""
        options = self.options
        base_url, metrics_url, pid = aggregator.base_url, aggregator.metrics_urls[0], aggregator.pids[0]
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
            print("[lab] warming up: %d clients on each path for %g s" % (options.clients, options.warmup_seconds))
            warm = Load(base_url, options.path_names, options.n, options.clients, timeout_s)
            warm.start()
            time.sleep(options.warmup_seconds)
            warm.stop()
        before = self.leftovers(pid, metrics_url, timeout_s, os.path.join(out, "heap-histogram-before.txt"))
        print("[lab] heap after a full GC before the faults: %.1f MiB" % (before["heap"]["used_bytes"] / 2**20))
        load = Load(base_url, options.path_names, options.n, options.clients, timeout_s, options.rate)
        pace = "%g requests a second each" % options.rate if options.rate else "each as fast as its answers come"
        print(
            "[lab] steady load: %d clients on each of %s, n=%d, %s"
            % (options.clients, " ".join(options.path_names), options.n, pace),
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
        after = self.leftovers(pid, metrics_url, timeout_s, os.path.join(out, "heap-histogram-after.txt"))
        print("[lab] heap after a full GC after the faults: %.1f MiB" % (after["heap"]["used_bytes"] / 2**20))
        phases = [Phase(fault_figures.STEADY, origin, None, marks[0][1])]
        for index, (name, started, cleared) in enumerate(marks):
            ends = marks[index + 1][1] if index + 1 < len(marks) else stopped
            phases.append(Phase(name, started, cleared, ends))
        limits = Limits(deadline_s, options.grace, options.recovery_limit, recovered_share=options.recovered_share)
        write_answers(os.path.join(out, "answers.csv"), load.answers, origin)
        return {
            "aggregator_deadline_s": deadline_s,
            "limits": asdict(limits),
            "timeline": [
                {
                    "phase": p.name,
                    "started_s": round(p.started - origin, 2),
                    "cleared_s": None if p.cleared is None else round(p.cleared - origin, 2),
                    "ends_s": round(p.ends - origin, 2),
                }
                for p in phases
            ],
            "rows": fault_figures.rows(phases, options.path_names, load.answers, limits),
            "hung_clients": hung,
            "before": before,
            "after": after,
            "answers": len(load.answers),
        }

    @staticmethod
    def leftovers(pid: int, metrics_url: str, wait_s: float, histogram: str) -> Dict:
        """The aggregator's work gauges once idle (or after wait_s), and its heap after a full GC with the classes
        that hold it, so that growth can be traced to what grew."""
        idle = wait_idle(metrics_url, wait_s)
        work_gauges(idle.samples)
        return {
            "gauges": idle.record(),
            "heap": {
                "used_bytes": int(jvm.heap_after_gc(pid, metrics_url)),
                "how": "jcmd GC.run, then %s once the service reported it" % jvm.LIVE_DATA,
                "class_histogram": jvm.class_histogram(pid, histogram),
            },
        }

    def checks(self, record: Dict) -> Dict[str, List[str]]:
        return checks(record)

    def facts(self, record: Dict) -> Dict:
        return {"fault_table": fault_figures.table}


main = Faults.main


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


def work_gauges(samples: List[metrics.Sample]) -> Dict[str, float]:
    """The aggregator's gauges of work under way by name (metrics.WORK_GAUGES, each summed over its
    transports); a LabError when it exposes no in-flight gauge or none of the admission ones."""
    found = metrics.work_gauges(samples)
    if metrics.IN_FLIGHT_GAUGE not in found or not set(found) & set(metrics.ADMISSION_WORK_GAUGES):
        raise LabError(
            "the aggregator's /actuator/prometheus has no %s, or none of %s: the lab cannot tell whether "
            "work is left over" % (metrics.IN_FLIGHT_GAUGE, ", ".join(metrics.ADMISSION_WORK_GAUGES))
        )
    return found


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
