"""The verdict: a run's answer in a few plain sentences, computed from its results.json, that summary.md and
report.html open with.

For each pair of the side-by-side table: which path is faster (req/s) and which is cheaper per call (the services' CPU
per downstream call), by how much, or "no difference within the spread" where the repeats' ranges overlap. Then what
each other payload shape, each other network and a sweep did to the paths, when the run has them. Self-contained: it
reads the results.json dict, and every sentence's wording is in TEMPLATES.
"""

from decimal import ROUND_HALF_UP, Decimal
from typing import TYPE_CHECKING, Dict, List, Optional, Tuple

from ..core import catalogue, records, repeats
from . import knee, tls_figures

if TYPE_CHECKING:
    from typing_extensions import TypeGuard

TEMPLATES = {
    # A pair of runs side by side: {faster}/{slower} or {first}/{second} name them.
    "faster_cheaper": "{faster} serves {rps} {slower_s} requests a second for {cpu} of its CPU per call.",
    "faster_dearer": "{faster} serves {rps} {slower_s} requests a second, for {cpu} its CPU per call.",
    "faster_same_cpu": "{faster} serves {rps} {slower_s} requests a second; no difference in CPU per call {within}.",
    "faster": "{faster} serves {rps} {slower_s} requests a second.",
    "same_cheaper": "{first} and {second}: no difference in requests a second {within}; {cheaper} takes {cpu} of "
    "{dearer_s} CPU per call.",
    "same": "{first} and {second}: no difference {within}, in requests a second or in CPU per call.",
    "same_no_cpu": "{first} and {second}: no difference in requests a second {within}.",
    "untrusted": "{first} and {second}: not compared, as {which_s} figures cannot be trusted (see below).",
    "within_spread": "within the spread",
    "within_close": "within %d %% (a single repeat: no spread to judge by)",
    # A pair measured at one of several settings (a sweep of n, concurrency or rate).
    "at": "At {setting}: {sentence}",
    # Each path across three stacks or more: its fastest stack against its slowest, as a pair.
    "stacks": "Across {count} stacks, the fastest against the slowest: {sentence}",
    # What another payload shape or network did to each path, against the first one; the path that lost most first.
    "payload": "The {shape} payload against {base}: {items}.",
    "payload_first": "{path} keeps {share} of its requests a second for {cpu} its CPU per call",
    "payload_next": "{path} {share} for {cpu}",
    "network": "On {network} against {base}, {path} suffers most, keeping {share} of its requests a second{others}.",
    "network_alone": "On {network} against {base}, {path} keeps {share} of its requests a second.",
    "network_next": "{path} {share}",
    "unmoved": " (no difference within the spread)",
    # A sweep, per n: concurrency (closed loop) or offered rate (open loop).
    "sweep_closed": "From {low} to {high} concurrent clients at n={n}, {top} serves the most requests a second (its "
    "best: {top_rps} at c={top_point}) and {bottom} the fewest (its best: {bottom_rps} at "
    "c={bottom_point}).",
    "sweep_closed_alone": "From {low} to {high} concurrent clients at n={n}, {top} serves at most {top_rps}, at "
    "c={top_point}.",
    "sweep_open": "Offered {low} to {high} requests a second at n={n}, {items}.",
    "kept_up_to": "{path} keeps up to {rate}/s",
    "kept_up_all": "{path} keeps up with every rate",
    "kept_up_none": "{path} with none",
}

# Without repeats there is no spread: medians closer than this are not called a difference.
CLOSE = 0.05
# An open-loop run keeps up with its offered rate when it answers at least this share of it correctly.
KEEPS_UP = 0.95


def sentences(data: Dict) -> List[str]:
    """The verdict of a results.json: the side-by-side pairs, then payload shapes, networks and sweeps."""
    if data.get("knee"):
        # A knee run's answer is each path's highest rate within its SLO, not its figures at any one rate.
        return knee.sentences(data)
    settings = data["settings"]
    runs = {records.key(run): run for run in data["runs"] if "error" not in run}
    first = {name: records.listed(settings, name)[0] for name in ("stack", "network", "payload")}
    return (
        pairs(runs, settings, first)
        + payloads(runs, settings, first)
        + networks(runs, settings, first)
        + sweeps(runs, settings, first)
    )


def pairs(runs: Dict[Tuple, Dict], settings: Dict, first: Dict[str, str]) -> List[str]:
    """A sentence per pair of the side-by-side table's paths, then the other stacks against the first (one other), or
    per path its fastest stack against its slowest (several others); on the first network and payload shape, at each
    n and the highest concurrency (or rate)."""
    found = []
    several = len(settings["n"]) > 1 or len(_points(settings)) > 1
    stacks = records.listed(settings, "stack")
    # The stacks in a TLS mode are compared with their plaintext twins (lab.tls_figures), the others with each other.
    entries = {entry["label"]: entry for entry in settings.get("stacks") or []}
    encrypted = [
        (stack, tls_figures.plaintext_of(entries[stack], entries), entries[stack]["tls"])
        for stack in stacks
        if (entries.get(stack) or {}).get("tls", catalogue.PLAINTEXT) != catalogue.PLAINTEXT
    ]
    compared = [stack for stack in stacks if stack not in {stack for stack, _, _ in encrypted}]
    point = max(_points(settings))
    for n in settings["n"]:

        def run_of(path: str, stack: str, n: int = n) -> Optional[Dict]:
            return runs.get((stack, first["network"], path, first["payload"], n, point))

        said = [pair(run_of(a, stacks[0]), run_of(b, stacks[0]), a, b) for a, b, _ in catalogue.COMPARISONS]
        for path in settings["paths"] if len(compared) > 1 else []:
            ranked = sorted(
                (run["rps"], stack, run) for stack in compared for run in [run_of(path, stack)] if _trusted(run)
            )
            if len(compared) == 2:
                names = _stack_names(entries, compared[1], compared[0])
                said.append(
                    pair(
                        run_of(path, compared[1]),
                        run_of(path, compared[0]),
                        "%s on %s" % (path, names[0]),
                        "%s on %s" % (path, names[1]),
                    )
                )
            elif len(ranked) > 1:
                (_, slow, slowest), (_, fast, fastest) = ranked[0], ranked[-1]
                sentence = pair(fastest, slowest, "%s on %s" % (path, fast), "%s on %s" % (path, slow))
                said.append(sentence and TEMPLATES["stacks"].format(count=len(ranked), sentence=sentence))
        # A stack in a TLS mode against itself in plaintext, path by path.
        for stack, twin, mode in encrypted:
            if twin is not None:
                said += [
                    pair(
                        run_of(path, stack),
                        run_of(path, twin),
                        "%s under %s" % (path, catalogue.TLS_NAMES[mode]),
                        "%s in plaintext" % path,
                    )
                    for path in settings["paths"]
                ]
        setting = "n=%d, %s" % (n, _point_text(settings, point))
        found += [
            TEMPLATES["at"].format(setting=setting, sentence=sentence) if several else sentence
            for sentence in said
            if sentence
        ]
    return found


def pair(run: Optional[Dict], other: Optional[Dict], name: str, other_name: str) -> Optional[str]:
    """One pair's sentence: which is faster and which cheaper per call, by how much; None without both runs' req/s."""
    if run is None or other is None:
        return None
    untrusted = [label for label, one in ((name, run), (other_name, other)) if records.problems(one)]
    if untrusted:
        return TEMPLATES["untrusted"].format(
            first=name, second=other_name, which_s=_possessive(" and ".join(untrusted))
        )
    speed = outcome(run, other, "rps", higher_is_better=True)
    cost = outcome(run, other, "cpu_us_per_call", higher_is_better=False)
    if speed is None:
        return None
    within = _within(run, other)
    if speed in ("run", "other"):
        winner, loser = (run, other) if speed == "run" else (other, run)
        names = {
            "faster": name if speed == "run" else other_name,
            "slower_s": _possessive(other_name if speed == "run" else name),
            "rps": _times(winner["rps"] / loser["rps"]),
        }
        if cost is None:
            return TEMPLATES["faster"].format(**names)
        if cost == "same":
            return TEMPLATES["faster_same_cpu"].format(within=within, **names)
        share = _cpu(winner) / _cpu(loser)
        if cost == speed:
            return TEMPLATES["faster_cheaper"].format(cpu=_percent(share), **names)
        return TEMPLATES["faster_dearer"].format(cpu=_times(share), **names)
    if cost is None:
        return TEMPLATES["same_no_cpu"].format(first=name, second=other_name, within=within)
    if cost == "same":
        return TEMPLATES["same"].format(first=name, second=other_name, within=within)
    (cheaper, cheap_run), (dearer, dear_run) = ((name, run), (other_name, other))[:: 1 if cost == "run" else -1]
    return TEMPLATES["same_cheaper"].format(
        first=name,
        second=other_name,
        within=within,
        cheaper=cheaper,
        dearer_s=_possessive(dearer),
        cpu=_percent(_cpu(cheap_run) / _cpu(dear_run)),
    )


def outcome(run: Dict, other: Dict, figure: str, higher_is_better: bool) -> Optional[str]:
    """Which of two runs did better on a figure ("run" or "other"), "same" when their repeats' ranges overlap (or,
    without repeats, their medians are within CLOSE), None when one lacks it."""
    value, other_value = _figure(run, figure), _figure(other, figure)
    if not value or not other_value:
        return None
    span, other_span = repeats.value_range(run, figure), repeats.value_range(other, figure)
    if span is not None and other_span is not None:
        if span[0] <= other_span[1] and other_span[0] <= span[1]:
            return "same"
    elif abs(value / other_value - 1) < CLOSE:
        return "same"
    return "run" if (value > other_value) == higher_is_better else "other"


def payloads(runs: Dict[Tuple, Dict], settings: Dict, first: Dict[str, str]) -> List[str]:
    """Per payload shape after the first: each path's req/s and CPU per call against the first shape's, on the first
    stack and network, at the first n and the highest concurrency (or rate); the path that lost most first."""
    shapes = records.listed(settings, "payload")
    n, point = settings["n"][0], max(_points(settings))
    found = []
    for shape in shapes[1:]:
        moved = _moved(
            runs,
            settings,
            lambda path, value: (first["stack"], first["network"], path, value, n, point),
            shapes[0],
            shape,
        )
        if not moved:
            continue
        items = [
            TEMPLATES["payload_first" if index == 0 else "payload_next"].format(
                path=path, share=share, cpu=_times(cpu) if cpu else "?"
            )
            for index, (path, share, cpu) in enumerate(moved)
        ]
        found.append(TEMPLATES["payload"].format(shape=shape, base=shapes[0], items=", ".join(items)))
    return found


def networks(runs: Dict[Tuple, Dict], settings: Dict, first: Dict[str, str]) -> List[str]:
    """Per network after the first: each path's req/s against the first network's, on the first stack and payload
    shape, at the first n and the highest concurrency (or rate); which path suffers most."""
    names = records.listed(settings, "network")
    n, point = settings["n"][0], max(_points(settings))
    found = []
    for net in names[1:]:
        moved = _moved(
            runs, settings, lambda path, value: (first["stack"], value, path, first["payload"], n, point), names[0], net
        )
        if not moved:
            continue
        (path, share, _), rest = moved[0], moved[1:]
        if not rest:
            found.append(TEMPLATES["network_alone"].format(network=net, base=names[0], path=path, share=share))
            continue
        others = "; " + ", ".join(TEMPLATES["network_next"].format(path=p, share=s) for p, s, _ in rest)
        found.append(TEMPLATES["network"].format(network=net, base=names[0], path=path, share=share, others=others))
    return found


def sweeps(runs: Dict[Tuple, Dict], settings: Dict, first: Dict[str, str]) -> List[str]:
    """Per n of a sweep of concurrency or rate: the fastest and slowest path at their best (closed loop), or up to
    which offered rate each path keeps up (open loop); on the first stack, network and payload shape."""
    points = sorted(_points(settings))
    if len(points) < 2:
        return []
    open_loop = settings.get("load") == "open"
    found = []
    for n in settings["n"]:
        lines = {
            path: [runs.get((first["stack"], first["network"], path, first["payload"], n, point)) for point in points]
            for path in settings["paths"]
        }
        lines = {path: line for path, line in lines.items() if any(_trusted(run) for run in line)}
        if not lines:
            continue
        if open_loop:
            items = [_kept_up(path, line, points) for path, line in lines.items()]
            found.append(TEMPLATES["sweep_open"].format(low=points[0], high=points[-1], n=n, items=", ".join(items)))
            continue
        peaks = sorted(
            ((max(run["rps"] for run in line if _trusted(run)), path) for path, line in lines.items()), reverse=True
        )
        (top_rps, top), (bottom_rps, bottom) = peaks[0], peaks[-1]

        def at(path: str, rps: float, lines: Dict = lines) -> int:
            return next(point for point, run in zip(points, lines[path]) if _trusted(run) and run["rps"] == rps)

        words = {
            "low": points[0],
            "high": points[-1],
            "n": n,
            "top": top,
            "top_rps": _rps(top_rps),
            "top_point": at(top, top_rps),
            "bottom": bottom,
            "bottom_rps": _rps(bottom_rps),
            "bottom_point": at(bottom, bottom_rps),
        }
        found.append(TEMPLATES["sweep_closed" if len(peaks) > 1 else "sweep_closed_alone"].format(**words))
    return found


def _kept_up(path: str, line: List[Optional[Dict]], points: List[int]) -> str:
    """Up to which offered rate a path answered at least KEEPS_UP of it, every lower rate included."""
    kept = None
    for point, run in zip(points, line):
        if not _trusted(run) or run["rps"] < KEEPS_UP * point:
            break
        kept = point
    if kept == points[-1]:
        return TEMPLATES["kept_up_all"].format(path=path)
    if kept is None:
        return TEMPLATES["kept_up_none"].format(path=path)
    return TEMPLATES["kept_up_to"].format(path=path, rate=kept)


def _moved(
    runs: Dict[Tuple, Dict], settings: Dict, key_of, base: str, value: str
) -> List[Tuple[str, str, Optional[float]]]:
    """(path, its share of its base req/s as text, its CPU per call as a multiple of its base's) per path measured
    both ways, the lowest share first."""
    moved = []
    for path in settings["paths"]:
        before, after = runs.get(key_of(path, base)), runs.get(key_of(path, value))
        if not (_trusted(before) and _trusted(after) and before["rps"]):
            continue
        share = _percent(after["rps"] / before["rps"])
        if outcome(after, before, "rps", higher_is_better=True) == "same" and repeats.value_range(before, "rps"):
            share += TEMPLATES["unmoved"]
        cpu = _cpu(after) / _cpu(before) if _cpu(before) else None
        moved.append((after["rps"] / before["rps"], path, share, cpu))
    return [(path, share, cpu) for _, path, share, cpu in sorted(moved)]


def _stack_names(entries: Dict[str, Dict], stack: str, other: str) -> Tuple[str, str]:
    """Two stacks as a sentence names them: by their Spring generation alone when that is all they differ in."""
    one, two = entries.get(stack), entries.get(other)
    if one and two and "spring" in one and "spring" in two:
        ignored = ("label", "paths", "spring")
        if {k: v for k, v in one.items() if k not in ignored} == {k: v for k, v in two.items() if k not in ignored}:
            return "Boot " + one["spring"], "Boot " + two["spring"]
    return stack, other


def _possessive(name: str) -> str:
    return name + ("'" if name.endswith("s") else "'s")


def _trusted(run: Optional[Dict]) -> "TypeGuard[Dict]":
    return run is not None and not records.problems(run)


def _figure(run: Dict, figure: str) -> Optional[float]:
    return run.get("rps") if figure == "rps" else _cpu(run)


def _cpu(run: Dict) -> float:
    return records.path_cpu(run, "us_per_call")


def _within(run: Dict, other: Dict) -> str:
    if repeats.value_range(run, "rps") and repeats.value_range(other, "rps"):
        return TEMPLATES["within_spread"]
    return TEMPLATES["within_close"] % round(CLOSE * 100)


def _points(settings: Dict) -> List[int]:
    return settings["rate"] if settings.get("load") == "open" else settings["concurrency"]


def _point_text(settings: Dict, point: int) -> str:
    return "%d/s" % point if settings.get("load") == "open" else "c=%d" % point


def _times(ratio: float) -> str:
    """A ratio as "1.12 times", "2.5 times", "12 times": about two significant figures."""
    return "%s times" % _round(ratio, 2 if ratio < 1.995 else 1 if ratio < 9.95 else 0)


def _percent(share: float) -> str:
    """A share as "35 %", "4.2 %" below ten."""
    value = share * 100
    return "%s %%" % _round(value, 1 if value < 9.95 else 0)


def _rps(value: float) -> str:
    return "%s req/s" % _round(value, 1 if value < 99.95 else 0)


def _round(value: float, digits: int) -> str:
    """Half up, with thousands separators, as the report's tables round."""
    rounded = Decimal(str(value)).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP)
    return "{:,.{}f}".format(rounded, digits)
