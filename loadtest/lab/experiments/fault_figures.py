"""The figures of a fault run, from its answers and its timeline, and the issue's requirements checked on them.

A phase is the steady load before the first fault, or one fault: from the moment its toxics were in place
(started) to the moment they were removed (cleared), and on to the next fault (ends). An answer belongs to the
phase in which it came, so that a request sent before a fault and cut short by it counts against that fault.
"""

import bisect
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence

from ..load.client import KINDS, OK, OTHER, WRONG, Answer

STEADY = "steady"
# Goodput is back once it reaches this share of what it was before the fault.
RECOVERED_SHARE = 0.9


@dataclass(frozen=True)
class Phase:
    name: str
    started: float
    # None for the steady load, which has no fault to clear.
    cleared: Optional[float]
    ends: float


@dataclass(frozen=True)
class Limits:
    """What the run promises: every answer within deadline_s (+ grace_s for the trip to the client and back),
    goodput back within recovery_s of a fault clearing."""

    deadline_s: float
    grace_s: float
    recovery_s: float
    # Goodput is measured over windows of this many seconds, the one before a fault over before_s.
    window_s: float = 1.0
    # The share of the goodput before a fault that counts as back.
    recovered_share: float = RECOVERED_SHARE
    before_s: float = 3.0


def goodput(ok_times: Sequence[float], start: float, end: float) -> float:
    """Correct answers per second that came in [start, end); ok_times sorted."""
    if end <= start:
        return 0.0
    return (bisect.bisect_left(ok_times, end) - bisect.bisect_left(ok_times, start)) / (end - start)


def recovery_s(
    ok_times: Sequence[float],
    cleared: float,
    before_rps: float,
    horizon_s: float,
    window_s: float = 1.0,
    step_s: float = 0.1,
    share: float = RECOVERED_SHARE,
) -> Optional[float]:
    """Seconds from the fault clearing to the start of the first window of window_s whose goodput is at least
    share (RECOVERED_SHARE unless told) of before_rps (0.0: the first window after it already was); None when no
    window that ends within horizon_s is, or when there was no goodput before the fault to recover to. ok_times
    sorted."""
    if before_rps <= 0:
        return None
    target = share * before_rps
    steps = int(round((horizon_s - window_s) / step_s))
    for step in range(max(-1, steps) + 1):
        offset = step * step_s
        if goodput(ok_times, cleared + offset, cleared + offset + window_s) >= target - 1e-9:
            return round(offset, 1)
    return None


def row(phase: Phase, path: str, answers: Sequence[Answer], limits: Limits) -> Dict:
    """One phase's figures on one path: its answers by kind (and why the ones that are neither ok, 503 nor 504 were
    not), the longest answer, the requests open when the fault cleared, goodput before and when it was back."""
    mine = [a for a in answers if a.path == path]
    came = [a for a in mine if phase.started <= a.answered < phase.ends]
    counts = {kind: sum(1 for a in came if a.kind == kind) for kind in KINDS}
    why: Dict[str, int] = {}
    for answer in came:
        if answer.kind in (OTHER, WRONG):
            why[answer.detail] = why.get(answer.detail, 0) + 1
    ok_times = sorted(a.answered for a in mine if a.kind == OK)
    record = {
        "phase": phase.name,
        "path": path,
        "answers": counts,
        "why": why,
        "longest_s": round(max((a.seconds for a in came), default=0.0), 3),
        "late": sum(1 for a in came if a.seconds > limits.deadline_s + limits.grace_s),
    }
    if phase.cleared is None:
        record["goodput_rps"] = round(goodput(ok_times, phase.started, phase.ends), 1)
        return record
    before = goodput(ok_times, phase.started - limits.before_s, phase.started)
    record.update(
        open_at_clear=sum(1 for a in mine if a.sent < phase.cleared < a.answered),
        goodput_before_rps=round(before, 1),
        goodput_during_rps=round(goodput(ok_times, phase.started, phase.cleared), 1),
        recovered_s=recovery_s(
            ok_times, phase.cleared, before, phase.ends - phase.cleared, limits.window_s, share=limits.recovered_share
        ),
    )
    return record


def rows(phases: Sequence[Phase], path_names: Sequence[str], answers: Sequence[Answer], limits: Limits) -> List[Dict]:
    return [row(phase, path, answers, limits) for phase in phases for path in path_names]


def failures(figures: Sequence[Dict], limits: Limits) -> List[str]:
    """Each way a row misses the issue's requirements, in words; empty when none does."""
    found = []
    for record in figures:
        where = "%s, %s" % (record["phase"], record["path"])
        answers = record["answers"]
        if answers[OTHER] or answers[WRONG]:
            found.append(
                "%s: %d answers neither an exact 200 nor a 503 or 504 with a problem body (%s)"
                % (
                    where,
                    answers[OTHER] + answers[WRONG],
                    "; ".join("%d x %s" % (count, why) for why, count in sorted(record["why"].items())),
                )
            )
        if record["late"]:
            found.append(
                "%s: %d answers took longer than the deadline of %g s (+ %g s), the longest %.2f s"
                % (where, record["late"], limits.deadline_s, limits.grace_s, record["longest_s"])
            )
        if record["phase"] == STEADY:
            if not answers[OK]:
                found.append("%s: no correct answer before any fault, so nothing to recover to" % where)
            continue
        recovered = record["recovered_s"]
        if recovered is None:
            found.append(
                "%s: goodput never came back to %d %% of its %.1f/s before the fault"
                % (where, round(limits.recovered_share * 100), record["goodput_before_rps"])
            )
        elif recovered > limits.recovery_s:
            found.append(
                "%s: goodput took %.1f s to come back to %d %% of before, more than %g s"
                % (where, recovered, round(limits.recovered_share * 100), limits.recovery_s)
            )
    return found


HEADS = [
    "fault",
    "path",
    "200 exact",
    "503",
    "504",
    "other",
    "wrong body",
    "longest (s)",
    "open at clear",
    "goodput before (/s)",
    "during (/s)",
    "back to 90 % after (s)",
]


def table(figures: Sequence[Dict]) -> Dict:
    """The figures as one of the report's tables (lab.results.results.markdown), one row per phase and path."""
    lines = []
    for record in figures:
        answers = record["answers"]
        steady = record["phase"] == STEADY
        recovered = record.get("recovered_s")
        lines.append(
            [
                record["phase"],
                record["path"],
                str(answers[OK]),
                str(answers["503"]),
                str(answers["504"]),
                str(answers[OTHER]),
                str(answers[WRONG]),
                "%.2f" % record["longest_s"],
                "-" if steady else str(record["open_at_clear"]),
                "%.1f" % (record["goodput_rps"] if steady else record["goodput_before_rps"]),
                "-" if steady else "%.1f" % record["goodput_during_rps"],
                "-" if steady else ("never" if recovered is None else "%.1f" % recovered),
            ]
        )
    return {"heads": HEADS, "rows": [{"cells": cells} for cells in lines]}
