"""Mixed traffic (MIX): after a run's measurements, the listed paths loaded at the same time, each beside its figures
alone from the same run: what happens to unary calls when a stream shares the channel.

On the first stack and network, at each N and each CONCURRENCY (LOAD=open: RATE), one load generator per path starts
at once: ab with CONCURRENCY clients, for as long as the slowest of the paths took alone at that setting (ab -t), or
Vegeta at RATE for DURATION. Each path reports its goodput (exact 200 answers a second), its p99, and its non-200
answers by status (503: shed; 504: deadline missed), as its generator tells them (lab.load.load_generator's mixed).
"""

import math
import threading
from typing import Callable, Dict, Iterable, List, Optional

from ..core import catalogue, records
from ..core.settings import Settings
from ..load import load_generator
from ..stage.services import Service
from . import bench


def measure(
    settings: Settings,
    services: List[Service],
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
    alone_by_key = {records.key(run): run for run in alone_runs}
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
    services: List[Service],
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
