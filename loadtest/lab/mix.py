"""Mixed traffic (MIX): after a run's measurements, the listed paths loaded at the same time, each beside its figures
alone from the same run: what happens to unary calls when a stream shares the channel.

On the first stack and network, at each N and each CONCURRENCY (LOAD=open: RATE), one load generator per path starts
at once: ab with CONCURRENCY clients, for as long as the slowest of the paths took alone at that setting (ab -t), or
Vegeta at RATE for DURATION. Each path reports its goodput (exact 200 answers a second), its p99, and its non-200
answers by status (503: shed; 504: deadline missed), as its generator tells them (lab.load_generator's mixed).
"""

import math
import threading
from typing import Callable, Dict, Iterable, List, Optional

from . import bench, catalogue, load_generator, results
from .settings import Settings

HOW = (
    "Mixed traffic (MIX): after the run's measurements, the listed paths were loaded at the same time, on the "
    "first stack and network, each by its own load generator started together: %s. Goodput is exact 200 "
    "answers a second; alone is the same path's median from this run's measurements. 503: shed by the "
    "aggregator's admission; 504: no answer within its deadline."
)


def measure(
    settings: Settings,
    services: List[bench.Service],
    raw_dir: str,
    vegeta: Optional[str],
    alone_runs: List[Dict],
    stack: str,
    network: str,
    log: Callable[[str], None],
) -> Dict:
    """results.json's "mix": every N and CONCURRENCY (RATE) with the MIX paths loaded together, each beside alone."""
    shape = settings.payload[0]
    points = settings.rate if settings.open_loop else settings.concurrency
    alone_by_key = {results.key(run): run for run in alone_runs}
    entries = []
    for n in settings.n:
        for point in points:
            alone = {name: alone_by_key.get((stack, network, name, shape, n, point)) for name in settings.mix}
            seconds = settings.duration_s if settings.open_loop else window_s(alone.values())
            print(
                "[lab] mixed traffic: %s together, n=%d %s=%d, %g s"
                % (" ".join(settings.mix), n, "rate" if settings.open_loop else "concurrency", point, seconds),
                flush=True,
            )
            measured = together(settings, services, raw_dir, vegeta, n, point, shape, seconds)
            bench.ensure_alive(
                services,
                "mixed traffic (%s) at n=%d, payload %s, network %s, stack %s"
                % (" ".join(settings.mix), n, shape, network, stack),
            )
            for name in settings.mix:
                measured[name]["alone"] = alone_figures(alone[name])
                log(
                    "%s: %s req/s exact (alone %s), p99 %s ms (alone %s), non-200 %s"
                    % (
                        name,
                        measured[name].get("goodput"),
                        measured[name]["alone"].get("goodput"),
                        measured[name].get("p99_ms"),
                        measured[name]["alone"].get("p99_ms"),
                        measured[name].get("non200") or 0,
                    )
                )
            entries.append(
                {
                    "n": n,
                    "point": point,
                    "seconds": seconds,
                    "paths": [dict(measured[name], path=name) for name in settings.mix],
                }
            )
    return {
        "paths": list(settings.mix),
        "payload": shape,
        "network": network,
        "stack": stack,
        "load": settings.load,
        "runs": entries,
    }


def window_s(alone: Iterable[Optional[Dict]]) -> int:
    """A closed loop's mixed window: as long as the slowest path took alone (whole seconds, as ab -t takes them)."""
    taken = [run.get("time_taken_s") or 0 for run in alone if run and "error" not in run]
    return max(1, math.ceil(max(taken, default=1)))


def together(
    settings: Settings,
    services: List[bench.Service],
    raw_dir: str,
    vegeta: Optional[str],
    n: int,
    point: int,
    shape: str,
    seconds: float,
) -> Dict[str, Dict]:
    """Each MIX path's figures, their load generators started together, each in a thread of its own."""
    base_urls = {s.name: s.base_url for s in services if s.base_url}
    generator = load_generator.for_settings(settings, vegeta)
    found: Dict[str, Dict] = {}

    def load(name: str) -> None:
        path = catalogue.ALL[name]
        url = path.url(base_urls, n, shape)
        slug = "mix_" + bench.run_slug(name, n, point, settings.open_loop, bench.Conditions(payload=shape))
        try:
            found[name] = generator.mixed(url, path.expected_body(n), point, seconds, raw_dir, slug)
        except Exception as error:  # noqa: BLE001 - a thread's error becomes the path's record, never lost
            found[name] = {"error": "%s: %s" % (type(error).__name__, error)}

    threads = [threading.Thread(target=load, args=(name,), name="mix-" + name) for name in settings.mix]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return found


def alone_figures(run: Optional[Dict]) -> Dict:
    """The same path's figures alone: its run's median goodput (ab: req/s times the share of exact answers; Vegeta's
    req/s is the goodput already) and p99, and its non-2xx over all its repeats."""
    if not run or "error" in run:
        return {"error": "no measurement alone" if not run else run["error"]}
    if run.get("load") == "open":
        goodput = run["rps"]
        non200 = {k: v for k, v in (run.get("errors") or {}).items() if k == "shed_503" or k.startswith("http_")}
    else:
        passed = (run.get("verified") or {}).get("passed") or 0
        goodput = round(run["rps"] * passed / run["completed"], 2) if run["completed"] else 0.0
        non200 = {"non-2xx": run["non2xx"]} if run["non2xx"] else {}
    return {
        "goodput": goodput,
        "p99_ms": (run.get("latency_ms") or {}).get("p99"),
        "non200": non200,
        "answered": run.get("completed"),
        "repeats": len(run.get("repeats") or [None]),
    }


def table(data: Dict, number: Callable) -> Optional[Dict]:
    """The report's "Mixed traffic: each path beside the others vs alone" table; None without a mix."""
    section = data.get("mix")
    if not section:
        return None
    open_loop_mix = section.get("load") == "open"
    rows = []
    for entry in section["runs"]:
        for figures in entry["paths"]:
            alone = figures.get("alone") or {}
            head = [figures["path"], str(entry["n"]), str(entry["point"])]
            if "error" in figures:
                rows.append(
                    {
                        "cells": head + ["error: " + figures["error"]] + [""] * 6,
                        "class": "bad",
                        "swatch": figures["path"],
                    }
                )
                continue
            fraction = (
                figures["goodput"] / alone["goodput"] * 100
                if figures.get("goodput") is not None and alone.get("goodput")
                else None
            )
            rows.append(
                {
                    "cells": head
                    + [
                        number(figures["goodput"], 2),
                        number(alone.get("goodput"), 2),
                        number(fraction, 0),
                        number(figures["p99_ms"], 3),
                        number(alone.get("p99_ms"), 3),
                        "%s (of %d)"
                        % (status_text(figures["statuses"], figures["transport_errors"]), figures["completed"]),
                        "%s (of %s)" % (status_text(alone.get("non200") or {}, {}), alone.get("answered", "–")),
                    ],
                    "swatch": figures["path"],
                }
            )
    how = HOW % (
        "Vegeta at the rate for DURATION"
        if open_loop_mix
        else "ab with CONCURRENCY clients, for as long as the slowest of them took alone"
    )
    return {
        "how": how,
        "table": {
            "heads": [
                "path",
                "n",
                "rate (/s)" if open_loop_mix else "concurrency",
                "goodput mixed (/s)",
                "goodput alone (/s)",
                "% of alone",
                "p99 mixed (ms)",
                "p99 alone (ms)",
                "non-200 mixed",
                "non-200 alone",
            ],
            "rows": rows,
        },
    }


def status_text(statuses: Dict[str, int], transport: Dict[str, int]) -> str:
    """503 12, 504 3, connect 2; or 0."""
    shown = {
        ("503" if kind == "shed_503" else kind.replace("http_", "")): count
        for kind, count in list(statuses.items()) + list(transport.items())
        if count
    }
    return ", ".join("%s %d" % item for item in shown.items()) or "0"


def problems(data: Dict) -> List[str]:
    """Why a run's mix is missing or incomplete: every N and setting, every MIX path, each with its figures and its
    figures alone, no wrong answer. How much goodput a path keeps is a finding, not a check."""
    wanted = data["settings"].get("mix") or []
    if not wanted:
        return []
    section = data.get("mix")
    if not section:
        return ["MIX is %s but results.json has no mix" % " ".join(wanted)]
    found = []
    settings = data["settings"]
    points = settings["rate"] if settings.get("load") == "open" else settings["concurrency"]
    have = {(entry["n"], entry["point"]): entry for entry in section["runs"]}
    for n in settings["n"]:
        for point in points:
            entry = have.get((n, point))
            if not entry:
                found.append("mix: no run at n=%d setting %d" % (n, point))
                continue
            by_path = {figures["path"]: figures for figures in entry["paths"]}
            for name in wanted:
                figures = by_path.get(name)
                where = "mix n=%d %d: %s" % (n, point, name)
                if figures is None or "error" in figures:
                    found.append("%s: %s" % (where, "missing" if figures is None else figures["error"]))
                elif "error" in (figures.get("alone") or {"error": "no figures alone"}):
                    found.append("%s: alone: %s" % (where, figures["alone"]["error"]))
                elif figures.get("wrong_answers"):
                    found.append("%s: %d wrong answers" % (where, figures["wrong_answers"]))
                elif not figures["completed"]:
                    found.append("%s: no answer at all" % where)
    return found
