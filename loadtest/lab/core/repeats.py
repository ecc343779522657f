"""Repeats: every combination is measured REPEATS times, interleaved (round 1 runs every combination once, then
round 2), so that the machine's drift hits every path alike. A run's record then holds the median of its
repeats, one small record per repeat, and the spread that says how far the figures moved.
"""

import math
import statistics
from typing import Callable, Dict, Hashable, List, Optional, Sequence, Tuple, TypeVar

Item = TypeVar("Item", bound=Hashable)

# A run whose rps moved more than this between its repeats is flagged in the summary and the report.
SPREAD_LIMIT_PERCENT = 10.0
# Counts add up over the repeats (so that square calls == completed x n still holds), peaks take the largest,
# everything else (rates, times, percentiles, CPU) is the median.
SUMMED = {
    "completed",
    "failed",
    "non2xx",
    "downstream_calls",
    "aggregator_requests",
    "square_calls",
    "square_streams",
    "connections_opened",
    "length_checked",
    "length_mismatches",
    "passed",
    "sent",
    "ok",
    "checked",
    "failed_breakdown",
    "errors",
    "unanswered_at_end",
    "connections_closed",
}
PEAKS = {"rss_mb"}


def turns(repeats: int, parts: int) -> List[Tuple[int, int]]:
    """(part, repeat) in the order they are measured: every repeat once in each part, in turn backward and forward,
    the last part forward. A machine that drifts over a run (a default run here got a tenth slower from its first
    parts to its last) then weighs on every repeat alike: in a fixed order the last repeat of each part was always the
    latest, and the slowest."""
    return [
        (part, repeat)
        for part in range(1, parts + 1)
        for repeat in (range(repeats, 0, -1) if (parts - part) % 2 else range(1, repeats + 1))
    ]


def interleaved(
    items: Sequence[Item],
    repeats: int,
    measure: Callable[[int, int, Item, List[Dict], int], Optional[Dict]],
    warm: Optional[Callable[[int, Item], None]] = None,
    after: Callable[[Item, Dict], None] = lambda item, record: None,
    parts: int = 1,
    add_up: Callable[[Item, List[Dict]], Dict] = lambda item, measured: measured[0],
) -> Dict[Item, List[Dict]]:
    """The one repeat loop: warm(index, item) for every item first (so that the first item measured is not the only
    one measured while the code all share is still cold), then REPEATS rounds, each measuring every item once with
    measure(repeat, index, item, earlier, part) and handing its record to after(item, record). Returns each item's
    records.

    With parts > 1, each repeat is measured in that many parts, and the parts of all repeats take turns: with 4
    parts, part 1 of repeat 3, 2 and 1 of every item, then part 2 of repeat 1, 2 and 3, and so on (turns), so that
    every repeat's parts lie spread over the whole run alike; earlier holds the repeat's parts measured so far,
    measure may return None for a part the earlier ones already filled, and add_up(item, parts) makes the measured
    ones (one, or several) one record."""
    if warm:
        for index, item in enumerate(items, 1):
            warm(index, item)
    measured: Dict[Item, List[Dict]] = {item: [] for item in items}
    taken: Dict[tuple, List[Dict]] = {}
    for part, repeat in turns(repeats, parts):
        for index, item in enumerate(items, 1):
            earlier = taken.setdefault((item, repeat), [])
            taken_now = measure(repeat, index, item, list(earlier), part)
            if taken_now is not None:
                earlier.append(taken_now)
            if part == parts:
                record = add_up(item, earlier)
                measured[item].append(record)
                after(item, record)
    return measured


# What each repeat keeps for itself (in its summary), and a median over the repeats would only blur.
PER_REPEAT = ("part_figures",)


def combine(records: List[Dict], summary: Callable[[Dict], Dict], figures: Optional[Dict] = None) -> Dict:
    """One run's record from its repeats' full records: the first repeat's shape with the median (or sum, or peak)
    of every figure, plus `repeats` (summary(record) of each) and `spread`. A repeat with an error makes the run's."""
    failed = next((record for record in records if "error" in record), None)
    run = dict(failed) if failed else merge(records)
    for key in PER_REPEAT:
        run.pop(key, None)
    run["repeats"] = [summary(record) for record in records]
    run["spread"] = spread(run["repeats"], figures or SPREAD_OF)
    return run


def merge(values: List, key: Optional[str] = None, rule: str = "median"):
    """The figures of several records as one: dicts key by key (a count missing from one record is 0 there),
    numbers by the rule their key (or an enclosing key) names, lists of numbers point by point (a median of latency
    curves is itself a curve), anything else as the first record that has it."""
    rule = "sum" if key in SUMMED else "max" if key in PEAKS else rule
    present = [value for value in values if value is not None]
    if not present:
        return None
    first = present[0]
    if isinstance(first, dict):
        keys = list(dict.fromkeys(k for value in present if isinstance(value, dict) for k in value))
        missing = 0 if rule == "sum" else None
        return {k: merge([(value or {}).get(k, missing) for value in values], k, rule) for k in keys}
    if isinstance(first, list) and all(isinstance(v, list) and len(v) == len(first) for v in values):
        return [merge(list(column), None, rule) for column in zip(*values)] if first else first
    numbers = [value for value in values if isinstance(value, (int, float)) and not isinstance(value, bool)]
    if numbers and None in values and rule == "median":
        # A figure some repeats lack (no correct answer to time): no median of the others would be the run's.
        return None
    if len(numbers) != len(values) or (rule != "sum" and len(set(numbers)) == 1):
        # A setting (n, concurrency, rate) is the same in every repeat, and stays exactly what it was.
        return first
    if rule == "sum":
        return sum(numbers)
    if rule == "max":
        return max(numbers)
    middle = statistics.median(numbers)
    return round(middle, 3) if isinstance(middle, float) else middle


# The figures whose spread a run records, read from one repeat's summary.
SPREAD_OF = {
    "rps": lambda repeat: repeat.get("rps"),
    "p50": lambda repeat: (repeat.get("latency_ms") or {}).get("p50"),
    "p99": lambda repeat: (repeat.get("latency_ms") or {}).get("p99"),
    "cpu_us_per_call": lambda repeat: repeat.get("cpu_us_per_call"),
}


def spread(repeats: List[Dict], figures: Dict[str, Callable[[Dict], Optional[float]]]) -> Dict[str, Optional[float]]:
    """(max - min) / median, in percent, of each figure over the repeats (None where one is missing, or with a single
    repeat): a run whose
    rps spread is above SPREAD_LIMIT_PERCENT did not hold still."""
    found: Dict[str, Optional[float]] = {}
    for figure, read in figures.items():
        read_values = [read(repeat) for repeat in repeats]
        values = [value for value in read_values if value is not None]
        if len(repeats) > 1 and len(values) == len(read_values):
            middle = statistics.median(values)
            found[figure] = round((max(values) - min(values)) / middle * 100, 1) if middle else None
        else:
            found[figure] = None
    return found


def unsteady(run: Dict, figure: str = "rps") -> bool:
    """Whether a run's figure moved more than SPREAD_LIMIT_PERCENT between its repeats."""
    value = (run.get("spread") or {}).get(figure)
    return value is not None and value > SPREAD_LIMIT_PERCENT


def value_range(run: Dict, figure: str, figures: Optional[Dict] = None) -> Optional[List[float]]:
    """[min, max] of one of the spread's figures over a run's repeats, or None with fewer than two."""
    values = [(figures or SPREAD_OF)[figure](repeat) for repeat in run.get("repeats") or []]
    values = [value for value in values if value is not None]
    return [min(values), max(values)] if len(values) > 1 else None


def percentile(values: List[float], percent: float) -> Optional[float]:
    """The lab's one percentile of a list of values (ab and Vegeta report their own), nearest-rank: the smallest
    value at least percent % of the values are at or below."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, math.ceil(percent / 100 * len(ordered)) - 1)]
