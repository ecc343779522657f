"""The gates of EXPECT (lab.core.gates) judged against results.json: each gate in every condition (stack, network,
payload shape, n, concurrency or rate) that measured the paths it names, against the medians, and against the
repeats' ranges to say whether the outcome stands beyond the noise."""

from collections import defaultdict
from typing import Dict, List, Optional, Tuple, Union

from ..core import gates, records
from ..core.gates import BASELINE, EVERY, Gate, Side

LATENCIES = ("p50", "p90", "p99", "max")


def judge(data: Dict, baseline: Optional[Dict] = None) -> List[Dict]:
    """Each gate of the run's settings (settings.expect), as results.json's `gates` records it: met when every
    condition it applies to meets it; a gate that applies to none is not met, and says why. baseline: the BASELINE
    run's results.json, which a gate may name."""
    expect = data["settings"].get("expect") or []
    conditions = _conditions(data["runs"])
    earlier = {records.key(run): run for run in (baseline or {}).get("runs") or []}
    return [_judged(gate, conditions, earlier) for gate in gates.parse("; ".join(expect))]


def record(data: Dict, expect: str, baseline: Optional[Dict] = None) -> None:
    """Judges the gates of an EXPECT value against a run's data and records them there (settings.expect, gates), in
    place of any it had."""
    parsed = gates.parse(expect)
    gates.check_measured(parsed, data["settings"]["paths"], baseline is not None)
    data["settings"]["expect"] = [gate.text for gate in parsed]
    data["gates"] = judge(data, baseline)


def failed(data: Dict) -> List[Dict]:
    """The gates results.json records as missed."""
    return [gate for gate in data.get("gates") or [] if not gate["met"]]


def _conditions(runs: List[Dict]) -> Dict[Tuple, Dict[str, Dict]]:
    """The runs by their condition (every part of records.key but the path), then by path."""
    found: Dict[Tuple, Dict[str, Dict]] = defaultdict(dict)
    for run in runs:
        stack, network, path, payload, n, point = records.key(run)
        found[(stack, network, payload, n, point, run.get("load") == "open")][path] = run
    return found


def _judged(gate: Gate, conditions: Dict[Tuple, Dict[str, Dict]], earlier: Dict[Tuple, Dict]) -> Dict:
    checks = []
    for by_path in conditions.values():
        lefts = list(by_path) if gate.subject.path == EVERY else [gate.subject.path]
        for left_path in lefts:
            named = [left_path] + [path for path in gate.paths()[1:] if path != BASELINE]
            if all(path in by_path for path in named):
                checks.append(_check(gate, by_path[left_path], by_path, earlier))
    record = {"gate": gate.text, "met": bool(checks) and all(check["met"] for check in checks), "checks": checks}
    if not checks:
        record["why"] = "no condition of this run measured %s" % " and ".join(
            path for path in gate.paths() if path != BASELINE
        )
    return record


def _check(gate: Gate, left_run: Dict, by_path: Dict[str, Dict], earlier: Dict[Tuple, Dict]) -> Dict:
    """The gate in one condition, on left_run (one path of a `*`)."""
    left = _side(gate.left, left_run)
    right: Union[str, Tuple[float, float, float]] = _constant(gate.right)
    if gate.right.reference and gate.right.reference.path == BASELINE:
        before = earlier.get(records.key(left_run))
        right = _side(gate.right, before) if before else "the baseline did not measure %s" % records.run_name(left_run)
    elif gate.right.reference:
        right = _side(gate.right, by_path[gate.right.reference.path])
    check: Dict = {"run": records.run_name(left_run)}
    if isinstance(left, str) or isinstance(right, str):
        return dict(check, met=False, why=left if isinstance(left, str) else right)
    met = gates.holds(left[0], gate.operator, right[0])
    return dict(
        check,
        met=met,
        left=left[0],
        right=right[0],
        left_range=[left[1], left[2]],
        right_range=[right[1], right[2]],
        within_noise=_within_noise(met, gate.operator, left, right),
    )


def _within_noise(met: bool, operator: str, left: Tuple[float, ...], right: Tuple[float, ...]) -> bool:
    """Whether some repeats would have given the other outcome: the gate at the ranges' worst for it when met, at
    their best when missed."""
    if operator == "==":
        return False
    upward = operator in (">=", ">")
    worst = (left[1], right[2]) if upward else (left[2], right[1])
    best = (left[2], right[1]) if upward else (left[1], right[2])
    return not gates.holds(worst[0], operator, worst[1]) if met else gates.holds(best[0], operator, best[1])


def _constant(side: Side) -> Tuple[float, float, float]:
    return side.factor, side.factor, side.factor


def _side(side: Side, run: Dict) -> Union[str, Tuple[float, float, float]]:
    """(median, lowest, highest) of factor × the figure in a run, or why the run has no such figure."""
    if records.failed(run):
        return "%s failed: %s" % (records.run_name(run), run[records.ERROR])
    assert side.reference is not None
    figure = side.reference.figure
    median = _median(run, figure)
    if median is None:
        return "%s has no %s" % (records.run_name(run), figure)
    values = [value for value in (_repeat(repeat, figure) for repeat in run.get("repeats") or []) if value is not None]
    low, high = (min(values), max(values)) if values else (median, median)
    return side.factor * median, side.factor * low, side.factor * high


def _median(run: Dict, figure: str) -> Optional[float]:
    if figure == "rps":
        return run.get("rps")
    if figure in LATENCIES:
        return (run.get("latency_ms") or {}).get(figure)
    if figure == "cpu_us_per_call":
        return records.path_cpu(run, "us_per_call") if run.get("cpu") else None
    if figure == "rss_mb":
        return (run.get("rss_mb") or {}).get(run["services"][0])
    return run.get(figure)


def _repeat(repeat: Dict, figure: str) -> Optional[float]:
    """A repeat's own figure, for those each repeat records; None for those of the whole run."""
    if figure == "rps":
        return repeat.get("rps")
    if figure in LATENCIES:
        return (repeat.get("latency_ms") or {}).get(figure)
    if figure == "cpu_us_per_call":
        return repeat.get("cpu_us_per_call")
    return None


def shown(data: Dict, fmt) -> Optional[Dict]:
    """The gates as summary.md and report.html list them, None without EXPECT: each with the conditions that missed
    it or met it only within the noise, their figures formatted by fmt."""
    judged = data.get("gates")
    if not judged:
        return None
    return {
        "met": sum(1 for gate in judged if gate["met"]),
        "status": gates.GATES_FAILED,
        "gates": [
            {
                "text": gate["gate"],
                "met": gate["met"],
                "why": gate.get("why"),
                "conditions": len(gate["checks"]),
                "notes": [_note(check, fmt) for check in gate["checks"] if not check["met"] or check["within_noise"]],
            }
            for gate in judged
        ],
    }


def _note(check: Dict, fmt) -> Dict:
    if "why" in check:
        return {"run": check["run"], "met": False, "figures": check["why"], "noise": None}

    def number(value: float) -> str:
        return fmt(value, 0 if abs(value) >= 100 else 2)

    noise = None
    if check["within_noise"]:
        noise = "%s–%s against %s–%s" % tuple(number(v) for v in check["left_range"] + check["right_range"])
    figures = "%s against %s" % (number(check["left"]), number(check["right"]))
    return {"run": check["run"], "met": check["met"], "figures": figures, "noise": noise}
