"""A knee run's answer (LOAD=knee, lab.core.knee): each path's highest rate within the SLO, in words and as a table,
from results.json's `knee`."""

from typing import Dict, List, Optional

from ..core import catalogue


def sentences(data: Dict) -> List[str]:
    """The verdict of a knee run, on its first stack, network and payload shape: each pair of paths' held rates
    against each other, then any path that held none."""
    first = _first_condition(data["knee"])
    held = {entry["path"]: entry for entry in data["knee"] if _condition(entry) == first}
    said = []
    for a, b, _ in catalogue.COMPARISONS:
        if a in held and b in held and held[a]["held_rate"] and held[b]["held_rate"]:
            ratio = held[a]["held_rate"] / held[b]["held_rate"]
            said.append(
                "within %s, %s holds %s %s's rate (%s against %s requests a second)"
                % (
                    held[a]["slo"],
                    a,
                    "%.1f times" % ratio if ratio >= 1 else "%d %% of" % round(ratio * 100),
                    b,
                    "{:,}".format(held[a]["held_rate"]),
                    "{:,}".format(held[b]["held_rate"]),
                )
            )
    for path, entry in held.items():
        if not entry["held_rate"]:
            said.append("%s held no rate within %s: %s" % (path, entry["slo"], entry["why"]))
    if not said and len(held) == 1:
        entry = next(iter(held.values()))
        said.append(
            "%s holds %s requests a second within %s" % (entry["path"], "{:,}".format(entry["held_rate"]), entry["slo"])
        )
    return said


def _condition(entry: Dict) -> tuple:
    return entry["stack"], entry["network"], entry["payload"], entry["n"]


def _first_condition(entries: List[Dict]) -> Optional[tuple]:
    return _condition(entries[0]) if entries else None


def table(data: Dict, fmt) -> Optional[Dict]:
    """One row per path and condition searched: the highest rate held, the lowest that broke, the latency at each,
    every rate measured in order, and why the search ended."""
    entries = data.get("knee")
    if not entries:
        return None
    figure = entries[0]["slo"].split(" ")[0]
    rows = []
    for entry in entries:
        by_rate = {step["rate"]: step for step in entry["steps"]}

        def latency(rate: Optional[int], by_rate: Dict = by_rate) -> str:
            """The SLO's latency at a rate as last measured, and the requests not answered right, when any were."""
            step = by_rate.get(rate) or {} if rate else {}
            value = step.get(figure + "_ms")
            said = "–" if value is None else fmt(value, 1) + " ms"
            sent, ok = step.get("sent") or 0, step.get("ok") or 0
            return said + (
                "; %s of %s not answered right" % ("{:,}".format(sent - ok), "{:,}".format(sent)) if ok < sent else ""
            )

        trail = ", ".join(
            "%s %s" % ("{:,}".format(step["rate"]), "✓" if step["held"] else "✗") for step in entry["steps"]
        )
        rows.append(
            {
                "cells": [
                    _label(entry),
                    "–" if entry["held_rate"] is None else "{:,}/s".format(entry["held_rate"]),
                    latency(entry["held_rate"]),
                    "–" if entry["broken_rate"] is None else "{:,}/s".format(entry["broken_rate"]),
                    latency(entry["broken_rate"]),
                    trail,
                    entry["why"],
                ]
            }
        )
    heads = ["path", "highest rate within " + entries[0]["slo"], figure, "lowest that broke it", figure]
    return {"heads": heads + ["rates measured, in order", "the search ended"], "rows": rows}


def _label(entry: Dict) -> str:
    """A searched path and its conditions: n always, the payload shape, network and stack when not the defaults."""
    return " · ".join(
        [entry["path"], "n=%d" % entry["n"]]
        + [
            value
            for value, usual in ((entry["payload"], catalogue.SMALL), (entry["network"], catalogue.LOOPBACK))
            if value != usual
        ]
        + ([entry["stack"]] if entry["stack"] else [])
    )
