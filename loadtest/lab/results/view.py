"""What report.html and summary.md show, computed once from results.json: every table (headers, rows of cell text,
each cell's CSS class), the cards, the alerts, every label and the charts' data. The templates in report/ lay it out
(lab/results/report.py), and report/charts.js draws the charts.

A table is {"heads": [...], "rows": [{"cells": [...], "class", "title", "swatch"}]}; a cell is its text, or
{"text", "class", "colspan"}. A row's swatch is the path whose colour marks it.
"""

from decimal import ROUND_HALF_UP, Decimal
from typing import Dict, List, Optional

from ..core import catalogue, metrics, records, repeats, windows
from ..core.records import path_cpu
from . import gates, knee, mix, results, soak, tls_figures, verdict

DASH = "–"


def view(data: Dict) -> Dict:
    settings, runs = data["settings"], data["runs"]
    open_loop = settings.get("load") == "open"
    points = settings["rate"] if open_loop else settings["concurrency"]
    sweep = len(points) > 1 or len(settings["n"]) > 1
    shown = conditions_shown(settings)
    tls_pairs = tls_figures.pairs(data)  # a TLS run beside its plaintext twin: the table, the chart, the comparisons
    labels = [run_label(run, sweep, shown) for run in runs]
    services = records.services_in(data)
    cores = data["environment"].get("cores") or 1
    return {
        "failures": results.failures(data),
        "verdict": verdict.sentences(data),
        "gates": gates.shown(data, fmt),
        "sweep": sweep,
        "run_labels": labels,
        "services": services,
        "combos": [
            {
                "network": net,
                "payload": shape,
                "n": n,
                "c": point,
                "label": conditions_label(shape, net, shown, combo_label(n, point, open_loop)),
            }
            for net in records.listed(settings, "network")
            for shape in records.listed(settings, "payload")
            for n in settings["n"]
            for point in points
        ],
        "points": [records.point(run) for run in runs],
        "curves": [latency_curve(run) for run in runs],
        "ranges": [{figure: repeats.value_range(run, figure) for figure in ("rps", "p99")} for run in runs],
        "load_generator": "vegeta" if open_loop else "ab",
        "sweep_axis": sweep_axis(data, points, open_loop),
        "alerts": alerts(data, labels),
        "cards": [] if sweep else [card(run, goal_percent(data), shown) for run in headline_runs(data)],
        "cpu_utilisation": {
            "axis": "CPU %% (%d %% = all %d cores)" % (cores * 100, cores),
            "max": cores * 100,
        },
        "call_time": call_time_view(runs, labels),
        "floor": floor_view(data, labels),
        "payload": payload_view(data, shown),
        "network": network_view(data, shown),
        "tls": tls_figures.chart(data, tls_pairs),
        "soak": soak.tables(runs, records.run_name, fmt),
        "mix": mix.table(data, fmt),
        "tables": {
            "runs": runs_table(runs, shown),
            "resources": resources_table(runs, services, shown),
            "server_side": server_side_table(runs, shown),
            "comparisons": comparisons_table(runs, shown, tls_pairs),
            "payload": payload_table(data, shown),
            "network": network_table(data, shown),
            "tls": tls_figures.table(tls_pairs, fmt, conditions_of, shown),
            "tls_floor": tls_figures.floor_table(data, fmt),
            "floor": floor_table(data),
            "floor_runs": floor_runs_table(data.get("floor")),
            "target": target_table(settings),
            "knee": knee.table(data, fmt),
        },
    }


def target_table(settings: Dict) -> Optional[Dict]:
    """TARGET: where each replica of the services the lab did not start ran, as it said (GET /actuator/info), and
    how the lab read its CPU and memory; None for the lab's own services."""
    found = settings.get("target_details")
    if not found:
        return None
    rows = [
        {
            "cells": [
                module,
                where.get("pod") or where.get("host") or "?",
                where.get("node") or "–",
                where.get("java") or "?",
                text(where.get("cores")),
                where["actuator"],
            ]
        }
        for module, replicas in found["services"].items()
        for where in replicas
    ]
    return {
        "heads": ["service", "host or pod", "node", "JDK", "cores it saw", "actuator"],
        "rows": rows,
        "how_read": found.get("how_read") or found.get("read"),
        "aggregator_url": found["aggregator_url"],
    }


def conditions_shown(settings: Dict) -> List[str]:
    """Which of a run's conditions the page names beside its path: the payload shape and the network, each when the
    lab run measured another than the default (small, loopback) or more than one; the stack when it measured
    several. The default run names none."""
    defaults = {"payload": catalogue.SMALL, "network": catalogue.LOOPBACK}
    shown = [name for name in ("payload", "network") if records.listed(settings, name) != [defaults[name]]]
    return shown + (["stack"] if len(records.listed(settings, "stack")) > 1 else [])


def conditions_of(run: Dict, shown: List[str]) -> List[str]:
    """The run's payload shape, network and stack, those shown."""
    return [
        {"payload": records.payload, "network": records.network, "stack": records.stack}[name](run) for name in shown
    ]


def first_stack(settings: Dict) -> str:
    """The stack the sections of sweeps, payload shapes and networks show: the first (every path ran on it); the
    others stand beside it in the tables and the stack comparisons."""
    return records.listed(settings, "stack")[0]


def conditions_label(shape: str, net: str, shown: List[str], rest: str = "") -> str:
    """A payload shape and network as labels show them, e.g. "collection · lan", then the rest (n and concurrency)."""
    parts = [value for name, value in (("payload", shape), ("network", net)) if name in shown]
    return " · ".join(parts + ([rest] if rest else []))


def run_label(run: Dict, sweep: bool, shown: Optional[List[str]] = None) -> str:
    label = combo_label(run["n"], records.point(run), run.get("load") == "open")
    parts = [run["path"]] + conditions_of(run, shown or [])
    return " · ".join(parts) + (" " + label if sweep else "")


def combo_label(n: int, point: int, open_loop: bool = False) -> str:
    return ("n=%d, %d/s" if open_loop else "n=%d, c=%d") % (n, point)


def latency_curve(run: Dict) -> Optional[List[List[float]]]:
    """[percentile, ms] points of a run's latency: ab's whole -e curve, or an open loop's HdrHistogram percentiles."""
    if "error" in run:
        return None
    if run.get("latency_curve_ms"):
        return [[percent, millis] for percent, millis in enumerate(run["latency_curve_ms"])]
    points = [
        [percent, run["latency_ms"].get(key)]
        for percent, key in ((50, "p50"), (90, "p90"), (99, "p99"), (99.9, "p99_9"), (100, "max"))
    ]
    points = [point for point in points if point[1] is not None]
    return points or None


def sweep_axis(data: Dict, points: List[int], open_loop: bool) -> Optional[Dict]:
    """The sweep charts' x axis (concurrency, or offered rate), and per path, payload shape, network and n its series;
    None without a sweep."""
    if len(points) < 2:
        return None
    values = sorted(points)
    settings = data["settings"]
    shown = conditions_shown(settings)
    by_point = {records.key(run): run for run in data["runs"] if "error" not in run}

    def series(line_key: tuple, read) -> List:
        return [read(by_point[line_key + (point,)]) if line_key + (point,) in by_point else None for point in values]

    lines = []
    for net in records.listed(settings, "network"):
        for path in settings["paths"]:
            for shape in records.listed(settings, "payload"):
                for n in settings["n"]:
                    line_key = (first_stack(settings), net, path, shape, n)
                    name = " · ".join(part for part in (path, conditions_label(shape, net, shown)) if part)
                    line = {
                        "path": path,
                        "n": n,
                        "label": "%s n=%d" % (name, n),
                        "rps": series(line_key, lambda run: run["rps"]),
                        "rps_ranges": series(line_key, lambda run: repeats.value_range(run, "rps")),
                        "latency": {
                            key: series(line_key, lambda run, key=key: run["latency_ms"].get(key))
                            for key in ("p50", "p90", "p99")
                        },
                    }
                    if open_loop:
                        line["error_percent"] = series(
                            line_key,
                            lambda run: (
                                round(100 * sum((run.get("errors") or {}).values()) / run["sent"], 2)
                                if run.get("sent")
                                else None
                            ),
                        )
                    lines.append(line)
    return {
        "values": values,
        "open_loop": open_loop,
        "lines": lines,
        "title": "offered rate (requests per second)" if open_loop else "concurrent ab clients",
        "latency_keys": ["p50", "p99"] if open_loop else ["p50", "p90"],
    }


def floor_name(record: Dict) -> str:
    return "%s, %s" % (record["transport"], window_text(record))


def window_text(record: Dict) -> str:
    return windows.Window.from_record(record["transport"], record["window"]).describe()


def goal_percent(data: Dict) -> int:
    return round((data.get("floor") or {}).get("goal", windows.GOAL) * 100)


def alerts(data: Dict, labels: List[str]) -> Dict[str, List[tuple]]:
    """What the page warns of, each as (label, why): runs that failed, runs that moved between their repeats, and
    floor runs that failed."""
    runs = list(zip(labels, data["runs"]))
    return {
        "troubled": [(label, "; ".join(records.problems(run))) for label, run in runs if records.problems(run)],
        "moved": [(label, fmt(run["spread"]["rps"], 1) + " %") for label, run in runs if repeats.unsteady(run)],
        "failed_floors": [
            (floor_name(record), record["error"])
            for record in (data.get("floor") or {}).get("runs", [])
            if "error" in record
        ]
        + [(label, run["floor"]["error"]) for label, run in runs if (run.get("floor") or {}).get("above_floor")],
        "less_certain": [(label, why) for label, run in runs for why in less_certain(run, data["settings"])],
    }


def less_certain(run: Dict, settings: Dict) -> List[str]:
    """Why a run's figures are less certain than a clean run's: repeats that could not take turns with the others as
    planned (a round longer than a part), figures that moved over the repeats, a warm-up that ended with the JIT still
    compiling; empty when none of these holds."""
    if records.failed(run):
        return []
    found = []
    planned = settings.get("parts") or 1
    measured = [repeat.get("parts") or 1 for repeat in run.get("repeats") or []]
    if planned > 1 and measured and min(measured) < planned:
        found.append(
            "each repeat was to be measured in %d parts that take turns with the other runs'; one round of %s "
            "requests took longer than a part, so its repeats took %s part(s) of %s round(s): a slower stretch of the "
            "machine may fall on one repeat more than on another"
            % (
                planned,
                run.get("concurrency"),
                "/".join(str(parts) for parts in measured),
                "/".join(str(repeat.get("rounds", "?")) for repeat in run["repeats"]),
            )
        )
    # Its req/s moving is an alert of its own ("moved").
    if repeats.unsteady(run, "cpu_us_per_call"):
        found.append(
            "its CPU per call moved %s %% over its repeats (limit %g %%)"
            % (fmt(run["spread"]["cpu_us_per_call"], 1), repeats.SPREAD_LIMIT_PERCENT)
        )
    if (run.get("warm_up") or {}).get("jit_settled") is False:
        found.append("its warm-up ended with a service's JIT compiler still busy")
    return found


def headline_runs(data: Dict) -> List[Dict]:
    """The runs of the cards: with several payload shapes or networks, those of the first of each (the sections
    below compare the others)."""
    settings = data["settings"]
    first = (first_stack(settings), records.listed(settings, "network")[0], records.listed(settings, "payload")[0])
    return [
        run
        for run in data["runs"]
        if "error" not in run and (records.stack(run), records.network(run), records.payload(run)) == first
    ]


def card(run: Dict, goal: int, shown: Optional[List[str]] = None) -> Dict:
    """One path's card: the numbers the article's table compares, and its fraction of floor."""
    latency = run["latency_ms"]
    rows = [
        ["p50 / p90", ms(latency["p50"]) + " / " + ms(latency["p90"])],
        ["p99 / max", ms(latency["p99"]) + " / " + ms(latency["max"])],
        ["service CPU per request", fmt(path_cpu(run, "ms_per_request"), 2) + " ms"],
        ["failed", str(run["failed"] + run["non2xx"])],
    ]
    if len(run.get("repeats") or []) > 1:
        rows.insert(
            0,
            [
                "spread of %d: req/s · p99" % len(run["repeats"]),
                spread_text(run, "rps") + " · " + spread_text(run, "p99"),
            ]
            + (["below-goal"] if repeats.unsteady(run) else []),
        )
    record = run.get("floor")
    if record:
        name = "of its floor (goal %d %%)" % goal
        if record.get("above_floor"):
            rows.append([name, "a floor that failed", "below-goal"])
        elif "error" in record:
            rows.append([name, "no floor", "below-goal"])
        else:
            rows.append([name, fraction_text(record)] + ([] if record["met"] else ["below-goal"]))
    return {
        "path": run["path"],
        "what": " · ".join(["%d squares per request" % run["n"]] + conditions_of(run, shown or [])),
        "big": fmt(run["rps"], 1),
        "rows": rows,
    }


def floor_view(data: Dict, labels: List[str]) -> Optional[Dict]:
    """The floor section's subtitle, and per path with a floor its bar: value (% of floor), figure and tooltips."""
    section = data.get("floor")
    if section is None:
        return None
    options = section.get("aggregator") or {}
    first = next((record for record in section["runs"] if "error" not in record), None)
    timing = ""
    if first and first.get("floor_settings"):
        floor_settings = first["floor_settings"]
        timing = "; each window warmed up for %gs (longer while a JVM's JIT still compiled), then measured %gs%s" % (
            floor_settings.get("warmup_s", 0),
            floor_settings.get("duration_s", 0),
            " a repeat, in %d parts that took turns with the other windows' on the same JVMs" % floor_settings["parts"]
            if (floor_settings.get("parts") or 1) > 1
            else "",
        )
    goal = goal_percent(data)
    bars = []
    for label, run in zip(labels, data["runs"]):
        record = run.get("floor")
        if not record:
            continue
        bar = {"label": label, "path": run["path"], "met": bool(record.get("met"))}
        if record.get("above_floor"):
            bar.update(value=None, text="a floor that failed: the path made more calls/s", tooltips=[record["error"]])
        elif "error" in record:
            bar.update(value=None, text="no floor: the floor run failed", tooltips=[])
        else:
            bar.update(
                value=record["fraction"] * 100,
                text=fraction_text(record),
                tooltips=[
                    "path: %s calls/s = %s of the floor"
                    % (fmt(record["path_calls_per_second"], 0), pct(record["fraction"])),
                    "floor (%s): %s calls/s" % (floor_name(record), fmt(record["floor_calls_per_second"], 0)),
                ]
                + ([record["at_floor_why"]] if record.get("at_floor") else []),
            )
        bars.append(bar)
    return {
        "subtitle": "transport-floor, run by the lab after the paths with the services stopped, on this machine, "
        "with the services' JVM options and the window the aggregator had in each run "
        "(%s)%s. Goal: every path at least %d %% of its floor."
        % (
            ", ".join(
                "aggregator.%s %s" % (name, options[key])
                for key, name in (
                    ("in_flight", "in-flight"),
                    ("rest_max_connections", "rest.max-connections"),
                    ("rest_h2c_connections", "rest.h2c-connections"),
                )
                if key in options
            ),
            timing,
            goal,
        ),
        "goal": goal,
        "goal_label": "goal %d %%" % goal,
        "bars": bars,
        "at_floor": [
            (label, run["floor"]["at_floor_why"])
            for label, run in zip(labels, data["runs"])
            if (run.get("floor") or {}).get("at_floor")
        ],
    }


def fraction_text(record: Dict) -> str:
    """A path's fraction of its floor; 100 % said as at its floor when it was above the floor within the noise."""
    return pct(record["fraction"]) + (" (at its floor, within the noise)" if record.get("at_floor") else "")


def key_heads(runs: List[Dict], shown: List[str]) -> List[str]:
    """The columns that tell a run: its path, the payload shape and network when shown, n and concurrency (rate)."""
    return ["path"] + shown + ["n", point_head(runs)]


def run_rows(runs: List[Dict], width: int, cells_of, shown: Optional[List[str]] = None) -> List[Dict]:
    """A row per run, its path's swatch first; a run that failed is red, with why in its tooltip."""
    rows = []
    shown = shown or []
    for run in runs:
        cells = [run["path"]] + conditions_of(run, shown) + [str(run["n"]), str(records.point(run))]
        cells += ["error: " + run["error"]] + [""] * (width - len(cells) - 1) if "error" in run else cells_of(run)
        row = {"cells": cells, "swatch": run["path"]}
        found = records.problems(run)
        if found:
            row.update({"class": "bad", "title": "; ".join(found)})
        rows.append(row)
    return rows


def runs_table(runs: List[Dict], shown: Optional[List[str]] = None) -> Dict:
    """Each run's medians, with the range of req/s and the spread of req/s and p99 over its repeats (flagged above
    the limit) when there are repeats; an open-loop run's counts of what it sent instead of ab's."""
    open_loop = any(run.get("load") == "open" for run in runs)
    repeated = any(len(run.get("repeats") or []) > 1 for run in runs)
    # Closed loops by time: how many parts and whole rounds of requests each repeat took.
    in_parts = any(repeat.get("rounds") for run in runs for repeat in run.get("repeats") or [])
    keys = ("mean", "p50", "p90", "p99", "p99_9", "max") if open_loop else ("mean", "p50", "p90", "p99", "max")
    heads = (
        key_heads(runs, shown or [])
        + ["req/s"]
        + (["req/s range", "p99 range", "spread: req/s · p99"] if repeated else [])
        + (["each repeat: parts × rounds"] if in_parts else [])
        + [key.replace("_", ".") for key in keys]
        + (["sent", "ok", "errors"] if open_loop else ["completed", "failed", "non-2xx"])
    )

    def cells(run):
        latency = run["latency_ms"]
        head = [fmt(run["rps"], 2)]
        if repeated:
            rps_range, p99_range = repeats.value_range(run, "rps"), repeats.value_range(run, "p99")
            moved = spread_text(run, "rps") + " · " + spread_text(run, "p99")
            head += [
                DASH if rps_range is None else "%s – %s" % (fmt(rps_range[0], 2), fmt(rps_range[1], 2)),
                DASH if p99_range is None else "%s – %s" % (ms(p99_range[0]), ms(p99_range[1])),
                {"text": moved, "class": "below-goal"} if repeats.unsteady(run) else moved,
            ]
        if in_parts:
            head.append(
                ", ".join(
                    "%s × %s" % (repeat.get("parts", DASH), repeat.get("rounds", DASH))
                    for repeat in run.get("repeats") or []
                )
            )
        latencies = [ms(latency.get(key)) for key in keys]
        if open_loop:
            errors = run.get("errors") or {}
            return (
                head
                + latencies
                + [
                    str(run["sent"]),
                    str(run["ok"]),
                    ", ".join("%s %d" % item for item in sorted(errors.items())) or "0",
                ]
            )
        return head + latencies + [str(run["completed"]), str(run["failed"]), str(run["non2xx"])]

    return {"heads": heads, "rows": run_rows(runs, len(heads), cells, shown)}


def point_head(runs: List[Dict]) -> str:
    return "rate (/s)" if any(run.get("load") == "open" for run in runs) else "concurrency"


def spread_text(run: Dict, figure: str) -> str:
    value = (run.get("spread") or {}).get(figure)
    return DASH if value is None else fmt(value, 1) + " %"


def comparisons_table(
    runs: List[Dict], shown: Optional[List[str]] = None, tls_pairs: Optional[List[tuple]] = None
) -> Optional[Dict]:
    """Per payload shape, network, n and setting, each pair of paths measured side by side: the ratio of their req/s
    and of their CPU per downstream call; each run in a TLS mode against its plaintext twin (tls_pairs, from
    lab.results.tls_figures.pairs). None when no pair was measured."""
    shown = shown or []
    by_key = {records.key(run): run for run in runs if "error" not in run}
    rows = []

    def compare(run: Dict, other: Dict, what: str, paths_text: str) -> None:
        cpu, other_cpu = path_cpu(run, "us_per_call"), path_cpu(other, "us_per_call")
        rows.append(
            {
                "cells": [what, paths_text]
                + conditions_of(run, shown)
                + [
                    str(run["n"]),
                    str(records.point(run)),
                    fmt(run["rps"] / other["rps"], 2) + "×",
                    fmt(cpu / other_cpu, 2) + "×" if cpu and other_cpu else DASH,
                ],
                "swatch": run["path"],
            }
        )

    for (stack, net, path, shape, n, point), run in by_key.items():
        for faster, slower, what in catalogue.COMPARISONS:
            other = by_key.get((stack, net, slower, shape, n, point))
            if path == faster and other is not None and other["rps"]:
                compare(run, other, what, "%s ÷ %s" % (faster, slower))
    stacks = list(dict.fromkeys(records.stack(run) for run in by_key.values()))
    # A run in a TLS mode against the same stack in plaintext (lab.tls_figures); each other stack against the first,
    # on the same path: the stacks a user chooses between.
    encrypted = {id(run) for run, _, _ in tls_pairs or []}
    for run, twin, entry in tls_pairs or []:
        mode = catalogue.TLS_NAMES[entry["tls"]]
        compare(run, twin, "%s: %s against plaintext" % (run["path"], mode), "%s ÷ plaintext" % mode)
    for (stack, net, path, shape, n, point), run in by_key.items():
        other = by_key.get((stacks[0], net, path, shape, n, point))
        if stack != stacks[0] and id(run) not in encrypted and other is not None and other["rps"]:
            compare(run, other, "%s: %s against %s" % (path, stack, stacks[0]), "%s ÷ %s" % (stack, stacks[0]))
    if not rows:
        return None
    return {
        "heads": ["comparison", "paths"] + shown + ["n", point_head(runs), "req/s ratio", "CPU per call ratio"],
        "rows": rows,
    }


def resources_table(runs: List[Dict], services: List[str], shown: Optional[List[str]] = None) -> Dict:
    """CPU per process, per request and per call, the bytes one call moved, and peak RSS; with Toxiproxy (a network
    through the proxy), CPU per call with and without it."""
    generator = "vegeta" if any(run.get("load") == "open" for run in runs) else "ab"
    proxied = catalogue.PROXY in services
    heads = (
        key_heads(runs, shown or [])
        + services
        + [generator, "steal", "machine", "service CPU / request", "service CPU / call"]
        + (["with the proxy / call"] if proxied else [])
        + ["bytes / call: request · response", "peak RSS (MiB)"]
    )

    def cpu_cell(entry):
        return "%s %%\n%s s" % (fmt(entry["percent"], 0), fmt(entry["seconds"], 2)) if entry else DASH

    def cells(run):
        with_proxy = (
            [fmt(path_cpu(run, "us_per_call", with_proxy=True), 1) + " µs" if catalogue.PROXY in run["cpu"] else DASH]
            if proxied
            else []
        )
        return (
            [cpu_cell(run["cpu"].get(name)) for name in services + [generator, "steal", "machine"]]
            + [fmt(path_cpu(run, "ms_per_request"), 2) + " ms", fmt(path_cpu(run, "us_per_call"), 1) + " µs"]
            + (with_proxy)
            + [bytes_text(run.get("bytes_per_call")), " / ".join(fmt(run["rss_mb"].get(name), 0) for name in services)]
        )

    return {"heads": heads, "rows": run_rows(runs, len(heads), cells, shown)}


def bytes_text(record: Optional[Dict]) -> str:
    """A run's bytes per call: "107 B · 110 B", or a dash without them."""
    if not record or record.get("request") is None:
        return DASH
    return "%s B · %s B" % (fmt(record["request"], 0), fmt(record["response"], 0))


def server_side_table(runs: List[Dict], shown: Optional[List[str]] = None) -> Optional[Dict]:
    """The services' own counts and times; None when no run has them (older results)."""
    if not any(run.get("server_side") for run in runs):
        return None
    heads = key_heads(runs, shown or []) + [
        "aggregator requests",
        "aggregator ms / request",
        "downstream calls",
        "client µs / call",
        "square calls",
        "square µs / call",
    ]

    def cells(run):
        side = run.get("server_side") or {"error": "no server-side figures"}
        if "error" in side:
            return [side["error"]] + [""] * 5
        times = call_times(run)
        return [
            fmt(side.get("aggregator_requests"), 0),
            fmt(side.get("aggregator_ms_per_request"), 2),
            fmt(side.get("downstream_calls"), 0),
            bounded(times["client_us"], times["client_bound"]),
            fmt(side.get("square_calls"), 0),
            bounded(times["server_us"], times["server_bound"]),
        ]

    return {"heads": heads, "rows": run_rows(runs, len(heads), cells, shown)}


def call_times(run: Dict) -> Dict:
    """A run's mean time of one downstream call (or stream message), client and server side (lab.server_metrics)."""
    return metrics.call_times(run["server_side"], catalogue.ALL[run["path"]].transport, run["n"])


def bounded(value: Optional[float], bound: bool) -> str:
    """A time in µs, "≤ 262.9" when it is only an upper bound."""
    return ("≤ " if bound and value is not None else "") + fmt(value, 1)


def call_time_view(runs: List[Dict], labels: List[str]) -> Optional[Dict]:
    """The chart of one call's time on each side: per run with server-side figures its label and both times, each
    marked when it is an upper bound; None when no run has them (older results)."""
    sides = [
        (label, run)
        for label, run in zip(labels, runs)
        if "error" not in run and run.get("server_side") and "error" not in run["server_side"]
    ]
    if not sides:
        return None
    times = [call_times(run) for _, run in sides]
    return {
        "labels": [label for label, _ in sides],
        "paths": [run["path"] for _, run in sides],
        "square_services": [run["server_side"].get("square_service") for _, run in sides],
        "client": [one["client_us"] for one in times],
        "client_bound": [one["client_bound"] for one in times],
        "server": [one["server_us"] for one in times],
        "server_bound": [one["server_bound"] for one in times],
    }


def payload_view(data: Dict, shown: List[str]) -> Optional[Dict]:
    """The payload section's charts: per payload shape (and network, n and concurrency when they vary), each path's
    bytes per call, request and response, and its services' CPU per call. None unless PAYLOAD had another shape than
    small."""
    if "payload" not in shown:
        return None
    settings = data["settings"]
    by_key = {records.key(run): run for run in data["runs"] if "error" not in run}
    categories = _shape_major(data)
    varying = [name for name in shown if name != "payload"]

    def label(net, shape, n, point):
        return conditions_label(
            shape,
            net,
            ["payload"] + varying,
            combo_label(n, point, settings.get("load") == "open") if _several(data) else "",
        )

    def series(path, read):
        stack = first_stack(settings)
        return [
            read(by_key[(stack, net, path, shape, n, point)]) if (stack, net, path, shape, n, point) in by_key else None
            for net, shape, n, point in categories
        ]

    return {
        "categories": [label(*category) for category in categories],
        "paths": [
            {
                "path": path,
                "request": series(path, lambda run: (run.get("bytes_per_call") or {}).get("request")),
                "response": series(path, lambda run: (run.get("bytes_per_call") or {}).get("response")),
                "cpu_us_per_call": series(path, lambda run: round(path_cpu(run, "us_per_call"), 3)),
                "rps": series(path, lambda run: run["rps"]),
            }
            for path in settings["paths"]
        ],
    }


def payload_table(data: Dict, shown: List[str]) -> Optional[Dict]:
    """Per payload shape and path: req/s, the services' CPU per call and the bytes one call moved each way, so that
    JSON's and protobuf's costs read side by side. None unless PAYLOAD had another shape than small."""
    if "payload" not in shown:
        return None
    runs = data["runs"]
    varying = [name for name in shown if name != "payload"]
    order = {key: index for index, key in enumerate(_shape_major(data))}
    ordered = sorted(
        runs,
        key=lambda run: (
            order.get((records.network(run), records.payload(run), run["n"], records.point(run)), 0),
            data["settings"]["paths"].index(run["path"]),
        ),
    )
    heads = (
        ["payload", "path"]
        + varying
        + ["n", point_head(runs), "req/s", "service CPU / call", "request bytes / call", "response bytes / call"]
    )
    rows = []
    for run in ordered:
        cells = (
            [records.payload(run), run["path"]] + conditions_of(run, varying) + [str(run["n"]), str(records.point(run))]
        )
        if "error" in run:
            rows.append(
                {
                    "cells": cells + [{"text": "error: " + run["error"], "colspan": 4, "class": "wrap"}],
                    "swatch": run["path"],
                    "class": "bad",
                    "title": run["error"],
                }
            )
            continue
        wire = run.get("bytes_per_call") or {}
        rows.append(
            {
                "cells": cells
                + [
                    fmt(run["rps"], 2),
                    fmt(path_cpu(run, "us_per_call"), 1) + " µs",
                    fmt(wire.get("request"), 1),
                    fmt(wire.get("response"), 1),
                ],
                "swatch": run["path"],
            }
        )
    return {"heads": heads, "rows": rows}


def _shape_major(data: Dict) -> List[tuple]:
    """(network, payload, n, point) of every combination, the payload shapes outermost, so that a shape's paths and
    settings stand together."""
    settings = data["settings"]
    points = settings["rate"] if settings.get("load") == "open" else settings["concurrency"]
    return [
        (net, shape, n, point)
        for shape in records.listed(settings, "payload")
        for net in records.listed(settings, "network")
        for n in settings["n"]
        for point in points
    ]


def _several(data: Dict) -> bool:
    """Whether the lab run swept n or the concurrency (or rate)."""
    settings = data["settings"]
    points = settings["rate"] if settings.get("load") == "open" else settings["concurrency"]
    return len(points) > 1 or len(settings["n"]) > 1


def network_view(data: Dict, shown: List[str]) -> Optional[Dict]:
    """The network section: each network's profile and the deadlines its runs had, and per path (and payload shape,
    n and concurrency) its req/s and p50 on each network, in NETWORK's order. None with a single network."""
    settings = data["settings"]
    networks = records.listed(settings, "network")
    profiles = settings.get("networks") or {}
    if len(networks) < 2:
        return None
    by_key = {records.key(run): run for run in data["runs"] if "error" not in run}
    lines = []
    for key in _network_lines(data):
        path, shape, n, point = key
        runs = [by_key.get((first_stack(settings), net, path, shape, n, point)) for net in networks]
        name = " · ".join([path] + ([shape] if "payload" in shown else []))
        lines.append(
            {
                "path": path,
                "label": name + (" " + combo_label(n, point, settings.get("load") == "open") if _several(data) else ""),
                # A path's shapes are told apart by their dashes.
                "dash": records.listed(settings, "payload").index(shape),
                "rps": [run["rps"] if run else None for run in runs],
                "p50": [run["latency_ms"].get("p50") if run else None for run in runs],
            }
        )
    return {
        "networks": networks,
        "lines": lines,
        "profiles": [network_text(net, profiles.get(net) or {}) for net in networks],
    }


def network_text(name: str, profile: Dict) -> str:
    """One network as the page describes it: its profile and what its runs waited at most."""
    limits = profile.get("deadlines") or {}
    reported = profile.get("aggregator_reported") or {}
    call = reported.get("call_deadline_ms")
    return "%s: %s; request deadline %s s, call deadline %s, load generator timeout %s s" % (
        name,
        profile.get("description", "?"),
        text(limits.get("request_s")),
        "%s s" % text(call / 1000)
        if call is not None
        else ("%s s" % text(limits["call_s"]) if limits.get("call_s") else "the aggregator's own"),
        text(limits.get("client_timeout_s")),
    )


def network_table(data: Dict, shown: List[str]) -> Optional[Dict]:
    """Per path (payload shape, n, concurrency): req/s and p50 on each network. None with a single network."""
    section = network_view(data, shown)
    if section is None:
        return None
    networks = section["networks"]
    heads = (
        ["path"]
        + [name for name in shown if name == "payload"]
        + ["n", point_head(data["runs"])]
        + ["%s on %s" % (figure, net) for net in networks for figure in ("req/s", "p50")]
    )
    rows = []
    for (path, shape, n, point), line in zip(_network_lines(data), section["lines"]):
        cells = [path] + ([shape] if "payload" in shown else []) + [str(n), str(point)]
        for rps, p50 in zip(line["rps"], line["p50"]):
            cells += [fmt(rps, 2), ms(p50)]
        rows.append({"cells": cells, "swatch": path})
    return {"heads": heads, "rows": rows}


def _network_lines(data: Dict) -> List[tuple]:
    """(path, payload, n, point) of every combination, each measured on every network."""
    settings = data["settings"]
    points = settings["rate"] if settings.get("load") == "open" else settings["concurrency"]
    return [
        (path, shape, n, point)
        for path in settings["paths"]
        for shape in records.listed(settings, "payload")
        for n in settings["n"]
        for point in points
    ]


def floor_table(data: Dict) -> Optional[Dict]:
    """Each path against its floor; None without a floor."""
    if data.get("floor") is None:
        return None
    heads = [
        "path",
        "n",
        "concurrency",
        "downstream calls/s",
        "floor: transport, window",
        "floor calls/s",
        "fraction of floor",
        "goal %d %%" % goal_percent(data),
        "path CPU µs/call",
        "floor CPU µs/call",
        "load 1m: path / floor",
    ]

    def cells(run):
        record = run["floor"]
        name = {"text": floor_name(record), "class": "soft"}
        if record.get("above_floor"):
            return [
                fmt(record["path_calls_per_second"], 0),
                name,
                fmt(record["floor_calls_per_second"], 0),
                {"text": "a floor that failed: the path made more calls/s", "class": "below-goal wrap", "colspan": 5},
            ]
        if "error" in record:
            # Its floor run's error is in the table of the floor runs, below.
            return [
                fmt(run["rps"] * run["n"], 0),
                name,
                {"text": "no floor: its floor run failed (below)", "class": "below-goal wrap", "colspan": 6},
            ]
        met = record["met"]
        mark = (lambda cell: cell) if met else (lambda cell: {"text": cell, "class": "below-goal"})
        load_before = (run.get("load_average_before") or [None])[0]
        return [
            fmt(record["path_calls_per_second"], 0),
            name,
            fmt(record["floor_calls_per_second"], 0),
            mark(fraction_text(record)),
            mark("met" if met else "not met"),
            fmt(record.get("path_cpu_us_per_call"), 1),
            fmt(record.get("floor_cpu_us_per_call"), 1),
            fmt(load_before, 2) + " / " + fmt(record.get("floor_load_average_1m"), 2),
        ]

    return {"heads": heads, "rows": run_rows([run for run in data["runs"] if run.get("floor")], len(heads), cells)}


def floor_runs_table(section: Optional[Dict]) -> Optional[Dict]:
    """The floor runs themselves; None without a floor."""
    if section is None:
        return None
    repeated = any(len(record.get("repeats") or []) > 1 for record in section["runs"])
    heads = (
        ["transport", "window", "calls/s"]
        + (["spread: calls/s · p99"] if repeated else [])
        + [
            "p50",
            "p99",
            "client CPU",
            "server CPU",
            "CPU µs / call",
            "steal",
            "load 1m",
            "warm-up / measured",
            "output",
        ]
    )
    rows = []
    for record in section["runs"]:
        head = [record["transport"], window_text(record)]
        if "error" in record:
            rows.append(
                {
                    "cells": head
                    + [
                        {"text": "error: " + record["error"], "class": "wrap", "colspan": len(heads) - 3},
                        record["folder"] + "/",
                    ],
                    "class": "bad",
                    "title": record["error"],
                }
            )
            continue
        latency = record.get("latency_us") or {}
        cpu = record["client_cpu_seconds"] + record["server_cpu_seconds"]
        floor_settings = record.get("floor_settings") or {}
        moved = spread_text(record, "calls_per_second") + " · " + spread_text(record, "p99")
        rows.append(
            {
                "cells": head
                + [fmt(record["calls_per_second"], 0)]
                + (
                    [{"text": moved, "class": "below-goal"} if repeats.unsteady(record, "calls_per_second") else moved]
                    if repeated
                    else []
                )
                + [
                    ms(_scaled(latency.get("p50"), 1e-3)),
                    ms(_scaled(latency.get("p99"), 1e-3)),
                    fmt(record["client_cpu_seconds"], 2) + " s",
                    fmt(record["server_cpu_seconds"], 2) + " s",
                    fmt(cpu * 1e6 / record["calls"], 1),
                    pct((record.get("machine_cpu") or {}).get("steal_percent"), 1),
                    fmt(record.get("load_average_1m"), 2),
                    "%gs / %gs"
                    % (
                        (record.get("warm_up") or {}).get("seconds", floor_settings.get("warmup_s", 0)),
                        floor_settings.get("duration_s", 0),
                    ),
                    record["folder"] + "/",
                ]
            }
        )
    return {"heads": heads, "rows": rows}


def stack_text(entry: Dict, targeted: bool = False) -> str:
    """One stack as the settings list describes it; TARGET's as its services said it (lab.target_stage)."""
    return (
        "square-rest-service on %s (square.server), the aggregator's REST client %s (aggregator.rest.client), "
        "every service on %s (JDK %s)%s; paths: %s"
    ) % (
        entry["rest_server"],
        entry.get("rest_client", "reactor-netty"),
        entry.get("java_home") or ("the JDK the aggregator says it runs" if targeted else "the lab's java"),
        entry["jdk_version"],
        ", virtual threads" if entry["virtual_threads"] else "",
        " ".join(entry["paths"]),
    )


def fmt(value, digits: int) -> str:
    """A number with thousands separators and exactly `digits` decimals, "–" when there is none. Rounds its shortest
    decimal form half up, as a browser's toLocaleString does: 0.975 is 0.98, though the float is a hair below."""
    if value is None:
        return DASH
    rounded = Decimal(str(value)).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP)
    return "{:,.{}f}".format(rounded, digits)


def ms(value) -> str:
    """A time in milliseconds, in seconds from one second up."""
    if value is None:
        return DASH
    if value >= 1000:
        return fmt(value / 1000, 2) + " s"
    return fmt(value, 2 if value < 10 else 1) + " ms"


def pct(value, scale: float = 100) -> str:
    """A fraction (or, with scale 1, a percentage) as "12.3 %"."""
    return DASH if value is None else fmt(value * scale, 1) + " %"


def text(value) -> str:
    """A figure as the page prints it: a whole number without its ".0", a missing one as "–"."""
    if value is None:
        return DASH
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _scaled(value, factor: float):
    return None if value is None else value * factor
