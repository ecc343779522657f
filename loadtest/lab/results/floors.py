"""Each path against its transport's floor: its downstream calls per second over the floor's, in results.json's
floor objects (lab.core.windows says which window each combination has)."""

from typing import Dict, List, Optional, Tuple

from ..core.windows import GOAL, Window, combination, compared_with_floor, cpu_us_per_call, plan


def path_floor(run: Dict, window: Window, floor_run: Optional[Dict]) -> Dict:
    """A measured path run's floor object: its downstream calls per second against its transport's floor."""
    record = {"transport": window.transport, "window": window.as_dict(), "goal": GOAL}
    if floor_run is None or "error" in floor_run:
        record.update(error="no floor: %s" % (floor_run or {}).get("error", "the floor did not run"), met=None)
        return record
    floor_cps = floor_run["calls_per_second"]
    path_cps = round(run["rps"] * run["n"], 2)
    fraction = round(path_cps / floor_cps, 4)
    overlap = _noise_overlap(run, floor_run)
    if fraction > 1 and overlap is not None:
        # Above the floor's median, but not beyond the noise of either: the path is at its floor, never above 100 %.
        path_low, floor_high = overlap
        record.update(
            at_floor=True,
            floor_calls_per_second=floor_cps,
            path_calls_per_second=path_cps,
            fraction=1.0,
            met=True,
            at_floor_why="at its floor: %s made %s downstream calls/s against its floor's %s (%s), %.1f %% more, but "
            "its slowest repeat (%s) made no more than the floor's fastest (%s): within the noise of both, so 100 %%"
            % (
                run["path"],
                _thousands(path_cps),
                _thousands(floor_cps),
                Window.describe(window),
                (fraction - 1) * 100,
                _thousands(path_low),
                _thousands(floor_high),
            ),
        )
        _add_cpu(record, run, floor_run)
        return record
    if fraction > 1:
        # A path cannot beat its bare transport on the same machine: that floor failed, and no fraction is given.
        record.update(
            above_floor=True,
            floor_calls_per_second=floor_cps,
            path_calls_per_second=path_cps,
            met=None,
            error="a floor that failed: %s made %s downstream calls/s, more than its floor's %s (%s): the floor ran "
            "colder or on a busier machine than the path, so the path has no fraction of floor"
            % (run["path"], _thousands(path_cps), _thousands(floor_cps), Window.describe(window)),
        )
        return record
    record.update(
        {
            "floor_calls_per_second": floor_cps,
            "path_calls_per_second": path_cps,
            "fraction": fraction,
            "met": fraction >= GOAL,
        }
    )
    _add_cpu(record, run, floor_run)
    return record


def _add_cpu(record: Dict, run: Dict, floor_run: Dict) -> None:
    read_us = [(run.get("cpu", {}).get(name) or {}).get("us_per_call") for name in run.get("services", [])]
    services_us = [us for us in read_us if us is not None] if None not in read_us else []
    record.update(
        path_cpu_us_per_call=round(sum(services_us), 2) if services_us else None,
        floor_cpu_us_per_call=cpu_us_per_call(floor_run),
        floor_load_average_1m=floor_run.get("load_average_1m"),
    )


def _noise_overlap(run: Dict, floor_run: Dict) -> Optional[Tuple[float, float]]:
    """The path's slowest repeat and the floor's fastest, in calls/s, when the first is no more than the second (their
    ranges overlap); None when they do not, or when either has a single repeat and so no noise to judge by."""
    path = [repeat["rps"] * run["n"] for repeat in run.get("repeats", []) if repeat.get("rps")]
    floor = [repeat["calls_per_second"] for repeat in floor_run.get("repeats", []) if repeat.get("calls_per_second")]
    if len(path) < 2 or len(floor) < 2 or min(path) > max(floor):
        return None
    return min(path), max(floor)


def _thousands(value: float) -> str:
    return "{:,.0f}".format(value)


def attach(data: Dict, floor_runs: List[Dict], extra: Optional[Dict] = None) -> None:
    """Puts the floor section into results and a floor object into every measured run that has a window: a TLS
    stack's run gets its mode's."""
    _, by_combination = plan(data["settings"])
    by_window = {Window.from_record(r["transport"], r["window"]): r for r in floor_runs}
    data["floor"] = dict(extra or {}, goal=GOAL, aggregator=data["settings"]["aggregator"], runs=floor_runs)
    for run in data["runs"]:
        window = by_combination.get(combination(run, data["settings"]))
        if window is None or "error" in run or not compared_with_floor(run):
            continue
        run["floor"] = path_floor(run, window, by_window.get(window))
