"""Two runs compared (`loadtest/run.sh --compare OLD NEW`, or BASELINE=OLD at the end of a run): per path and condition
measured in both, the change in req/s, CPU per call, p99 and peak RSS, each decided by a two-sided Mann-Whitney U
test over the samples of both runs (every part of every repeat; each repeat where a run kept no parts) at a 5 %
significance level. Differences in machine, JDK, stacks or settings are said first."""

import math
import statistics
from typing import Dict, List, Optional, Tuple

from ..core import records

ALPHA = 0.05
# How far two default runs of one commit, one after the other, moved apart on this project's 2-core machine: up to
# 9.2 % in req/s (rest/h2c, 2026-12-07), 6.0 % (grpc/pingpong, 2026-12-08), 6.0 % in small runs (docs/pipeline.md).
DRIFT_PERCENT = 10.0

# (figure, its words, whether more is better); samples from each part (lab.measure.bench.part_figures).
FIGURES = (
    ("rps", "req/s", True),
    ("cpu_us_per_call", "CPU per call", False),
    ("p99", "p99", False),
    ("rss_mb", "peak RSS", False),
)
# What two runs must share for their figures to compare as like with like: each difference is said first.
ENVIRONMENT = (("cpu_model", "CPU"), ("cores", "cores"), ("jdk", "JDK"), ("os", "OS"))
SETTINGS = (
    ("java_opts", "JAVA_OPTS"),
    ("aggregator_args", "AGGREGATOR_ARGS"),
    ("load", "LOAD"),
    ("requests", "REQUESTS"),
)


def compare(old: Dict, new: Dict, folders: Tuple[str, str] = ("old", "new")) -> Dict:
    """The comparison of two results.json documents (from the folders named), as comparison.json records it."""
    old_runs = {records.key(run): run for run in old["runs"] if not records.failed(run)}
    new_runs = {records.key(run): run for run in new["runs"] if not records.failed(run)}
    rows = [_row(old_runs[key], new_runs[key]) for key in new_runs if key in old_runs]
    return {
        "old": dict(_identity(old), folder=folders[0]),
        "new": dict(_identity(new), folder=folders[1]),
        "alpha": ALPHA,
        "drift_percent": DRIFT_PERCENT,
        "test": "Mann-Whitney U, two-sided, over each part of each repeat (each repeat where a run kept no parts)",
        "differences": differences(old, new),
        "rows": rows,
        "only_old": [records.run_name(old_runs[key]) for key in old_runs if key not in new_runs],
        "only_new": [records.run_name(new_runs[key]) for key in new_runs if key not in old_runs],
    }


def _identity(data: Dict) -> Dict:
    return {"started_at": data["started_at"], "commit": data["environment"].get("git_commit")}


def differences(old: Dict, new: Dict) -> List[str]:
    """How the two runs' machines, JDKs, stacks and settings differ, in words; empty when alike."""
    found = []
    for key, words in ENVIRONMENT:
        before, after = old["environment"].get(key), new["environment"].get(key)
        if before != after:
            found.append("%s: %s, then %s" % (words, before, after))
    stacks = [records.listed(data["settings"], "stack") for data in (old, new)]
    if stacks[0] != stacks[1]:
        found.append("stacks: %s, then %s" % tuple(", ".join(s) or "(unnamed)" for s in stacks))
    for key, words in SETTINGS:
        before, after = old["settings"].get(key), new["settings"].get(key)
        if before != after:
            found.append("%s: %s" % (words, _changed(before, after)))
    return found + machine_speed(old, new)


def machine_speed(old: Dict, new: Dict) -> List[str]:
    """Whether the machine itself changed speed: the bare transports of both runs' floors, which no code of the
    services runs, moved apart by DRIFT_PERCENT or more (one and the same VM was 12 to 32 % slower a day later)."""
    floors = [_floor_rates(data) for data in (old, new)]
    moved = sorted(
        (100 * (floors[1][name] / floors[0][name] - 1), name)
        for name in floors[0]
        if name in floors[1] and floors[0][name]
    )
    if not moved or max(abs(change) for change, _ in moved) < DRIFT_PERCENT:
        return []
    return [
        "the machine: the bare transports of the floor, no service code, moved by %s between the runs, so the paths' "
        "changes below may be the machine's" % ", ".join("%+.1f %% (%s)" % (change, name) for change, name in moved)
    ]


def _floor_rates(data: Dict) -> Dict[str, float]:
    """Each plaintext floor transport's calls a second."""
    runs = (data.get("floor") or {}).get("runs") or []
    return {
        run["transport"]: run["calls_per_second"] for run in runs if not run.get("tls") and run.get("calls_per_second")
    }


def _changed(before, after) -> str:
    """Two settings' difference in words: for lists of options (JAVA_OPTS), the options added and removed."""
    if isinstance(before, str) and isinstance(after, str) and (len(before) > 40 or len(after) > 40):
        old_options, new_options = before.split(), after.split()
        added = [option for option in new_options if option not in old_options]
        removed = [option for option in old_options if option not in new_options]
        said = ["added %s" % " ".join(added)] if added else []
        return "; ".join(said + (["removed %s" % " ".join(removed)] if removed else [])) or "reordered"
    return "%s, then %s" % (
        before if before not in (None, "") else "(empty)",
        after if after not in (None, "") else "(empty)",
    )


def _row(old: Dict, new: Dict) -> Dict:
    figures = {name: _figure(name, better_up, old, new) for name, _, better_up in FIGURES}
    return {"run": records.run_name(new), "figures": figures, "verdict": _verdict(figures)}


def _figure(name: str, better_up: bool, old: Dict, new: Dict) -> Dict:
    before, after = samples(old, name), samples(new, name)
    if not before or not after:
        return {"decision": "not measured"}
    old_median, new_median = statistics.median(before), statistics.median(after)
    change = (new_median / old_median - 1) if old_median else None
    p = mann_whitney_p(before, after) if len(before) > 1 and len(after) > 1 else None
    # The samples are parts of one run each, so the test cannot see how far two whole runs of one commit drift
    # apart: a change inside DRIFT_PERCENT, or inside either run's spread over its repeats, is not called one.
    spread = max([DRIFT_PERCENT] + [((data.get("spread") or {}).get(name)) or 0 for data in (old, new)])
    figure = {
        "old": old_median,
        "new": new_median,
        "change": None if change is None else round(change, 4),
        "samples": [len(before), len(after)],
        "p": None if p is None else round(p, 4),
        "spread": spread,
    }
    if p is None:
        decision = "one figure per run: no test"
    elif smallest_p(len(before), len(after)) >= ALPHA:
        decision = "too few samples to tell (%d and %d)" % (len(before), len(after))
    elif p >= ALPHA:
        decision = "no change beyond the noise"
    elif change is not None and abs(change) * 100 < spread:
        decision = "significant, but within the %s %% runs drift apart" % _g(spread)
    else:
        decision = "better" if (new_median > old_median) == better_up else "worse"
    return dict(figure, decision=decision)


def smallest_p(n1: int, n2: int) -> float:
    """The smallest two-sided p-value the test can give samples of these sizes: every value of one above the other."""
    return min(1.0, 2 / math.comb(n1 + n2, n1))


def _verdict(figures: Dict[str, Dict]) -> str:
    """The path's change in words, from its req/s and then its CPU per call."""
    rps, cpu = figures["rps"], figures["cpu_us_per_call"]
    if rps["decision"] in ("better", "worse"):
        return "%s by %s (significant)" % ("faster" if rps["decision"] == "better" else "slower", _percent(rps))
    if cpu["decision"] in ("better", "worse"):
        return "%s CPU per call by %s (significant); req/s no change beyond the noise" % (
            "less" if cpu["decision"] == "better" else "more",
            _percent(cpu),
        )
    if rps["decision"].startswith("too few"):
        return rps["decision"]
    if rps["decision"].startswith("significant"):
        return "no change beyond the noise (req/s %+.1f %%: %s)" % (100 * (rps["change"] or 0), rps["decision"])
    return "no change beyond the noise"


def _percent(figure: Dict) -> str:
    return "%.1f %%" % abs(100 * (figure["change"] or 0))


def samples(run: Dict, figure: str) -> List[float]:
    """A run's samples of a figure: each part of each repeat, else each repeat, else the run's one figure."""
    if figure == "rss_mb":
        rss = (run.get("rss_mb") or {}).get(run["services"][0]) if run.get("services") else None
        return [rss] if rss is not None else []
    repeats = run.get("repeats") or []
    parts = [part.get(figure) for repeat in repeats for part in repeat.get("part_figures") or []]
    if repeats and all(repeat.get("part_figures") for repeat in repeats):
        return [value for value in parts if value is not None]
    each = [_repeat_figure(repeat, figure) for repeat in repeats] if repeats else [_repeat_figure(run, figure)]
    return [value for value in each if value is not None]


def _repeat_figure(record: Dict, figure: str) -> Optional[float]:
    if figure == "p99":
        return (record.get("latency_ms") or {}).get("p99")
    if figure == "cpu_us_per_call" and "cpu_us_per_call" not in record and record.get("cpu"):
        return records.path_cpu(record, "us_per_call")
    return record.get(figure)


def mann_whitney_p(before: List[float], after: List[float]) -> float:
    """The two-sided p-value of the Mann-Whitney U test of two samples: exact (the distribution of U counted) when no
    value ties, else the normal approximation with its tie and continuity corrections."""
    n1, n2 = len(before), len(after)
    ranks = _ranks(before + after)
    u = sum(ranks[:n1]) - n1 * (n1 + 1) / 2
    if len(set(before + after)) == n1 + n2:
        counts = _u_counts(n1, n2)
        total = sum(counts)
        low = sum(counts[: int(u) + 1]) / total
        high = sum(counts[int(u) :]) / total
        return min(1.0, 2 * min(low, high))
    ties = _tie_sizes(before + after)
    mean = n1 * n2 / 2
    variance = n1 * n2 / 12 * ((n1 + n2 + 1) - sum(t**3 - t for t in ties) / ((n1 + n2) * (n1 + n2 - 1)))
    if variance <= 0:
        return 1.0
    z = max(0.0, abs(u - mean) - 0.5) / math.sqrt(variance)
    return min(1.0, math.erfc(z / math.sqrt(2)))


def _ranks(values: List[float]) -> List[float]:
    """Each value's rank among all (1 for the smallest), ties sharing their mean rank."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and values[order[end + 1]] == values[order[start]]:
            end += 1
        for position in range(start, end + 1):
            ranks[order[position]] = (start + end) / 2 + 1
        start = end + 1
    return ranks


def _tie_sizes(values: List[float]) -> List[int]:
    return [values.count(value) for value in set(values) if values.count(value) > 1]


def _u_counts(n1: int, n2: int) -> List[int]:
    """How many orderings of n1 and n2 values give each U from 0 to n1·n2 (Mann and Whitney's recurrence)."""
    table: Dict[Tuple[int, int], List[int]] = {}

    def counts(a: int, b: int) -> List[int]:
        if a == 0 or b == 0:
            return [1] + [0] * (a * b)
        if (a, b) not in table:
            # The largest value is from the first sample (it outranks all b of the second) or from the second.
            with_a = [0] * b + counts(a - 1, b)
            with_b = counts(a, b - 1) + [0] * a
            table[(a, b)] = [x + y for x, y in zip(with_a, with_b)]
        return table[(a, b)]

    return counts(n1, n2)


COMPARISON_JSON = "comparison.json"
COMPARISON_MD = "comparison.md"


def table(comparison: Dict, fmt) -> Dict:
    """The comparison as a Markdown table: one row per run measured in both, a cell per figure."""
    heads = ["run", "verdict"] + [words for _, words, _ in FIGURES]
    rows = [
        [row["run"], row["verdict"]] + [_cell(row["figures"][name], fmt) for name, _, _ in FIGURES]
        for row in comparison["rows"]
    ]
    return {"heads": heads, "rows": [{"cells": cells} for cells in rows]}


def _cell(figure: Dict, fmt) -> str:
    if "old" not in figure:
        return figure["decision"]

    def number(value: float) -> str:
        return fmt(value, 0 if abs(value) >= 100 else 2)

    change = "" if figure["change"] is None else "%+.1f %%, " % (100 * figure["change"])
    p = "" if figure["p"] is None else "p = %s, " % fmt(figure["p"], 3)
    return "%s → %s (%s%s%s)" % (number(figure["old"]), number(figure["new"]), change, p, figure["decision"])


def _g(value: float) -> str:
    return "%g" % round(value, 1)
