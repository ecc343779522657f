"""Checks a results folder the way CI does: every path present, no failures, sane figures.

    python3 -m lab.check_results DIR     (run from loadtest/, or with loadtest/ on PYTHONPATH)
"""

import sys
from typing import Dict, List

from . import paths, results


def problems(data: Dict) -> List[str]:
    """Every reason the results are not a clean, complete lab run; empty when they are."""
    found = []
    settings = data["settings"]
    expected = {(p, n, c) for p in settings["paths"] for n in settings["n"] for c in settings["concurrency"]}
    present = {(run["path"], run["n"], run["concurrency"]) for run in data["runs"]}
    for missing in sorted(expected - present):
        found.append("no run for path %s n=%d concurrency=%d" % missing)
    if not data.get("finished_at"):
        found.append("the lab did not finish (finished_at is empty)")
    for run in data["runs"]:
        found += ["%s n=%d c=%d: %s" % (run["path"], run["n"], run["concurrency"], problem)
                  for problem in run_problems(run)]
    return found


def run_problems(run: Dict) -> List[str]:
    found = results.problems(run)
    if "error" in run:
        return found
    if run["completed"] != run["requests"]:
        found.append("completed %d of %d requests" % (run["completed"], run["requests"]))
    latency = run["latency_ms"]
    order = [latency[key] for key in ("p50", "p90", "p99", "max")]
    if None in order or order != sorted(order):
        found.append("percentiles out of order: p50, p90, p99, max = %s" % order)
    if not run["rps"] > 0:
        found.append("requests per second is %s" % run["rps"])
    for service in paths.ALL[run["path"]].services:
        seconds = run["cpu"].get(service, {}).get("seconds")
        if not seconds or seconds <= 0:
            found.append("no CPU seconds recorded for %s, which served this path" % service)
        if not run["rss_mb"].get(service):
            found.append("no peak RSS recorded for %s" % service)
    return found


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    data = results.read_json(argv[0])
    found = problems(data)
    for problem in found:
        print("[check] FAIL: %s" % problem, file=sys.stderr)
    if found:
        return 1
    print("[check] OK: %d runs in %s, all verified, 0 failed, 0 non-2xx, percentiles in order, CPU recorded"
          % (len(data["runs"]), argv[0]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
