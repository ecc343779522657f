"""Checks a results folder the way CI does: every path present, no failures, sane figures, and the services'
own counts agree with ab's: every square came from its own downstream call (or stream message).

    python3 -m lab.check_results DIR     (run from loadtest/, or with loadtest/ on PYTHONPATH)
"""

import sys
from typing import Dict, List, Optional, Tuple

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
    found += server_side_check(run)[0]
    return found


def server_side_check(run: Dict) -> Tuple[List[str], Optional[str]]:
    """(problems, why the count check was skipped or None) of a run's server_side figures.

    The strongest check the lab can make: over exactly the measured run (the warm-up is before the first
    scrape), the square service served square_calls == the aggregator's downstream_calls == completed x n,
    and the aggregator counted completed successful requests. With failed requests the counts cannot agree,
    so the check is skipped (the failures fail the run anyway).
    """
    if "error" in run:
        return [], None
    side = run.get("server_side")
    if not side:
        return ["no server-side figures (server_side is missing)"], None
    if "error" in side:
        return [side["error"]], None
    if run["failed"] or run["non2xx"]:
        return [], "%d failed and %d non-2xx requests: square calls not compared with requests x n" % (
            run["failed"], run["non2xx"])
    path = paths.ALL[run["path"]]
    completed = run["completed"]
    expected = completed * path.calls_per_request(run["n"])
    found = []
    if path.target == paths.AGGREGATOR:
        if side.get("aggregator_requests") != completed:
            found.append("the aggregator counted %s successful requests, ab completed %d"
                         % (side.get("aggregator_requests"), completed))
        if side.get("downstream_calls") != expected:
            found.append("the aggregator made %s downstream calls, expected %d (%d requests x n=%d)"
                         % (side.get("downstream_calls"), expected, completed, run["n"]))
    if side.get("square_calls") != expected:
        found.append("%s served %s square calls, expected %d (%d requests x %d)"
                     % (side.get("square_service", "the square service"), side.get("square_calls"), expected,
                        completed, path.calls_per_request(run["n"])))
    return found, None


def notes(data: Dict) -> List[str]:
    """What the check did not compare, and why."""
    found = []
    for run in data["runs"]:
        skipped = server_side_check(run)[1]
        if skipped:
            found.append("%s n=%d c=%d: server-side count check skipped: %s"
                         % (run["path"], run["n"], run["concurrency"], skipped))
    return found


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    data = results.read_json(argv[0])
    found = problems(data)
    for note in notes(data):
        print("[check] note: %s" % note, file=sys.stderr)
    for problem in found:
        print("[check] FAIL: %s" % problem, file=sys.stderr)
    if found:
        return 1
    print("[check] OK: %d runs in %s, all verified, 0 failed, 0 non-2xx, percentiles in order, CPU recorded, "
          "square calls served == downstream calls == requests x n" % (len(data["runs"]), argv[0]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
