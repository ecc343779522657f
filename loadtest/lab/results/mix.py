"""The mixed traffic's figures (lab.measure.mix measures them): each path beside the others against its figures alone,
its table and what the check asks of it."""

from typing import Callable, Dict, List, Optional

HOW = (
    "Mixed traffic (MIX): after the run's measurements, the listed paths were loaded at the same time, on the "
    "first stack and network, each by its own load generator started together: %s. Goodput is exact 200 "
    "answers a second; alone is the same path's median from this run's measurements. 503: shed by the "
    "aggregator's admission; 504: no answer within its deadline."
)


def table(data: Dict, number: Callable) -> Optional[Dict]:
    """The report's "Mixed traffic: each path beside the others vs alone" table; None without a mix."""
    section = data.get("mix")
    if not section:
        return None
    open_loop_mix = section.get("load") == "open"
    rows = []
    for entry in section["runs"]:
        for figures in entry["paths"]:
            alone = figures.get("alone") or {}
            head = [figures["path"], str(entry["n"]), str(entry["point"])]
            if "error" in figures:
                rows.append(
                    {
                        "cells": head + ["error: " + figures["error"]] + [""] * 6,
                        "class": "bad",
                        "swatch": figures["path"],
                    }
                )
                continue
            fraction = (
                figures["goodput"] / alone["goodput"] * 100
                if figures.get("goodput") is not None and alone.get("goodput")
                else None
            )
            rows.append(
                {
                    "cells": head
                    + [
                        number(figures["goodput"], 2),
                        number(alone.get("goodput"), 2),
                        number(fraction, 0),
                        number(figures["p99_ms"], 3),
                        number(alone.get("p99_ms"), 3),
                        "%s (of %d)"
                        % (status_text(figures["statuses"], figures["transport_errors"]), figures["completed"]),
                        "%s (of %s)" % (status_text(alone.get("non200") or {}, {}), alone.get("answered", "–")),
                    ],
                    "swatch": figures["path"],
                }
            )
    how = HOW % (
        "Vegeta at the rate for DURATION"
        if open_loop_mix
        else "ab with CONCURRENCY clients, for as long as the slowest of them took alone"
    )
    return {
        "how": how,
        "table": {
            "heads": [
                "path",
                "n",
                "rate (/s)" if open_loop_mix else "concurrency",
                "goodput mixed (/s)",
                "goodput alone (/s)",
                "% of alone",
                "p99 mixed (ms)",
                "p99 alone (ms)",
                "non-200 mixed",
                "non-200 alone",
            ],
            "rows": rows,
        },
    }


def status_text(statuses: Dict[str, int], transport: Dict[str, int]) -> str:
    """503 12, 504 3, connect 2; or 0."""
    shown = {
        ("503" if kind == "shed_503" else kind.replace("http_", "")): count
        for kind, count in list(statuses.items()) + list(transport.items())
        if count
    }
    return ", ".join("%s %d" % item for item in shown.items()) or "0"


def problems(data: Dict) -> List[str]:
    """Why a run's mix is missing or incomplete: every N and setting, every MIX path, each with its figures and its
    figures alone, no wrong answer. How much goodput a path keeps is a finding, not a check."""
    wanted = data["settings"].get("mix") or []
    if not wanted:
        return []
    section = data.get("mix")
    if not section:
        return ["MIX is %s but results.json has no mix" % " ".join(wanted)]
    found = []
    settings = data["settings"]
    points = settings["rate"] if settings.get("load") == "open" else settings["concurrency"]
    have = {(entry["n"], entry["point"]): entry for entry in section["runs"]}
    for n in settings["n"]:
        for point in points:
            entry = have.get((n, point))
            if not entry:
                found.append("mix: no run at n=%d setting %d" % (n, point))
                continue
            by_path = {figures["path"]: figures for figures in entry["paths"]}
            for name in wanted:
                figures = by_path.get(name)
                where = "mix n=%d %d: %s" % (n, point, name)
                if figures is None or "error" in figures:
                    found.append("%s: %s" % (where, "missing" if figures is None else figures["error"]))
                elif "error" in (figures.get("alone") or {"error": "no figures alone"}):
                    found.append("%s: alone: %s" % (where, figures["alone"]["error"]))
                elif figures.get("wrong_answers"):
                    found.append("%s: %d wrong answers" % (where, figures["wrong_answers"]))
                elif not figures["completed"]:
                    found.append("%s: no answer at all" % where)
    return found
