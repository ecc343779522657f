"""The results folder's two text files: results.json (a contract other tools read) and summary.md."""

import json
import os
from typing import Dict, List, Optional

from . import floor
from .paths import AGGREGATOR, SQUARE_GRPC, SQUARE_REST

SERVICE_ORDER = (AGGREGATOR, SQUARE_REST, SQUARE_GRPC)


def write_json(results_dir: str, results: Dict) -> str:
    target = os.path.join(results_dir, "results.json")
    # Written to a side file and renamed, so that a reader never sees half a file.
    with open(target + ".part", "w") as handle:
        json.dump(results, handle, indent=2)
        handle.write("\n")
    os.replace(target + ".part", target)
    return target


def read_json(results_dir: str) -> Dict:
    with open(os.path.join(results_dir, "results.json")) as handle:
        return json.load(handle)


def problems(run: Dict) -> List[str]:
    """Why a run's figures cannot be trusted as they stand; empty when they can."""
    if "error" in run:
        return [run["error"]]
    found = []
    if not run.get("verified"):
        found.append("the answer was not verified")
    if run["failed"]:
        found.append("%d failed requests" % run["failed"])
    if run["non2xx"]:
        found.append("%d non-2xx responses" % run["non2xx"])
    return found


def services_in(results: Dict) -> List[str]:
    """The services that ran, in the report's order."""
    present = set()
    for run in results["runs"]:
        present.update(name for name in run.get("cpu", {}) if name in SERVICE_ORDER)
    return [name for name in SERVICE_ORDER if name in present]


def summary_table(results: Dict) -> str:
    """The article's table, one row per run, as Markdown (which also reads well in a terminal)."""
    services = services_in(results)
    header = ["path", "n", "concurrency", "req/s", "p50 ms", "p90 ms", "p99 ms", "max ms"]
    header += ["CPU %s" % name for name in services] + ["failed"]
    rows = []
    for run in results["runs"]:
        if "error" in run:
            rows.append([run["path"], str(run["n"]), str(run["concurrency"]), "error: " + run["error"]]
                        + [""] * (len(header) - 4))
            continue
        latency = run["latency_ms"]
        row = [run["path"], str(run["n"]), str(run["concurrency"]), "%.2f" % run["rps"]]
        row += [_ms(latency[key]) for key in ("p50", "p90", "p99", "max")]
        row += [_cpu_cell(run["cpu"].get(name)) for name in services]
        failed = str(run["failed"])
        if run["non2xx"]:
            failed += " (+%d non-2xx)" % run["non2xx"]
        rows.append(row + [failed])
    return markdown_table(header, rows)


def server_side_table(results: Dict) -> str:
    """The services' own counts and times over each measured run, as Markdown; empty when no run has them."""
    if not any(run.get("server_side") for run in results["runs"]):
        return ""
    header = ["path", "n", "concurrency", "aggregator requests", "aggregator ms/request", "downstream calls",
              "client µs/call", "square calls", "square µs/call"]
    rows = []
    for run in results["runs"]:
        side = run.get("server_side") or {"error": "no server-side figures"}
        row = [run["path"], str(run["n"]), str(run["concurrency"])]
        if "error" in side:
            rows.append(row + [side["error"]] + [""] * (len(header) - 4))
            continue
        if side.get("square_us_per_call_upper_bound") is not None:
            square_us = "≤ " + _number(side["square_us_per_call_upper_bound"], "%.1f")
        else:
            square_us = _number(side.get("square_us_per_call"), "%.1f")
        rows.append(row + [_number(side.get("aggregator_requests"), "%d"),
                           _number(side.get("aggregator_ms_per_request"), "%.2f"),
                           _number(side.get("downstream_calls"), "%d"), _number(side.get("client_us_per_call"), "%.1f"),
                           _number(side.get("square_calls"), "%d"), square_us])
    return markdown_table(header, rows)


def floor_table(results: Dict) -> str:
    """Each path run against its bare transport's floor, as Markdown; empty when the results have no floor."""
    measured = [run for run in results["runs"] if run.get("floor")]
    if "floor" not in results or not measured:
        return ""
    header = ["path", "n", "concurrency", "downstream calls/s", "floor: transport, window", "floor calls/s",
              "fraction of floor", "≥ %d %%" % round(floor.GOAL * 100), "CPU µs/call path", "CPU µs/call floor",
              "load 1m path / floor"]
    rows = []
    for run in measured:
        record = run["floor"]
        window = floor.Window.from_record(record["transport"], record["window"])
        row = [run["path"], str(run["n"]), str(run["concurrency"])]
        if "error" in record:
            # The floor run's error is listed below the table, once.
            rows.append(row + [_number(run["rps"] * run["n"], "%.0f"), "%s, %s" % (window.transport, window.describe()),
                               "no floor: its floor run failed (below)"] + [""] * (len(header) - 6))
            continue
        load_before = run.get("load_average_before") or [None]
        rows.append(row + [
            "%.0f" % record["path_calls_per_second"], "%s, %s" % (window.transport, window.describe()),
            "%.0f" % record["floor_calls_per_second"], "%.1f %%" % (record["fraction"] * 100),
            "yes" if record["met"] else "**no**", _number(record.get("path_cpu_us_per_call"), "%.1f"),
            _number(record.get("floor_cpu_us_per_call"), "%.1f"),
            "%s / %s" % (_number(load_before[0], "%.2f"), _number(record.get("floor_load_average_1m"), "%.2f"))])
    return markdown_table(header, rows)


def floor_markdown(results: Dict) -> List[str]:
    """summary.md's "Transport floor" section: what the floor is, the table, and the floor runs that failed."""
    section = results.get("floor")
    if section is None:
        return []
    options = section.get("aggregator") or {}
    ran = [run for run in section.get("runs", []) if "error" not in run]
    timing = ""
    if ran:
        floor_settings = ran[0].get("floor_settings") or {}
        timing = " Each floor run: a warm-up of %gs, then %gs measured." % (floor_settings.get("warmup_s", 0),
                                                                         floor_settings.get("duration_s", 0))
    lines = [
        "## Transport floor",
        "",
        "The bare transports (`transport-floor/`, no Spring on the path), run after the paths with the services "
        "stopped, on this machine, with the services' JVM options and the window the aggregator had in each run "
        "(`aggregator.in-flight` %s, `aggregator.rest.max-connections` %s): rest_unary, min(max-connections, "
        "concurrency × min(n, in-flight)) keep-alive connections; grpc_unary, concurrency × min(n, in-flight) calls "
        "in flight; grpc_stream, concurrency streams of n messages.%s Fraction of floor: the path's downstream "
        "calls per second (req/s × n) ÷ its transport's floor calls per second. Goal: every path at least %d %% "
        "of its floor. CPU per call: the path's services (aggregator and square service) against the floor's "
        "client and server, each over its measured run. Load: the one-minute load average before the path's "
        "run, and when the floor's measuring began."
        % (options.get("in_flight", "?"), options.get("rest_max_connections", "?"), timing, round(floor.GOAL * 100)),
        "",
    ]
    table = floor_table(results)
    lines += [table] if table else ["No measured path has a floor (rest/square is a baseline; n=0 makes no calls).", ""]
    failed = [run for run in section.get("runs", []) if "error" in run]
    if failed:
        lines += ["**Floor runs that failed:**", ""]
        lines += ["- %s, %s: %s" % (run["transport"],
                                    floor.Window.from_record(run["transport"], run["window"]).describe(),
                                    run["error"].replace("|", "\\|")) for run in failed]
        lines.append("")
    return lines


def summary_markdown(results: Dict) -> str:
    env, settings = results["environment"], results["settings"]
    lines = [
        "# REST vs gRPC load-test results",
        "",
        "%s, on %s." % (results.get("finished_at") or results.get("started_at"), machine_line(env)),
        "",
        "Each run: `%s`, after a discarded warm-up of %d requests. ab speaks HTTP/1.0 without keep-alive "
        "(a new connection per request), as in the article. Everything runs on this one machine; "
        "CPU %% is of one core (%d cores = %d %%), CPU seconds cover exactly the measured run."
        % (settings["ab_command"], settings["warmup"], env["cores"] or 0, (env["cores"] or 0) * 100)
        + replicas_sentence(settings.get("replicas", 1)),
        "",
        summary_table(results),
    ]
    side_table = server_side_table(results)
    if side_table:
        lines += [
            "## Server side",
            "",
            "The services' own metrics (`/actuator/prometheus`), read right before and right after each measured "
            "run. Aggregator: its successful requests and their mean time; the downstream calls (stream messages) "
            "it made and one's mean time as its client sees it, send to answer. Square service: the calls "
            "(messages) it served and its own mean processing time of one. On grpc/stream that time (≤) is an "
            "upper bound: the server times whole streams, which include waiting for the client's next message.",
            "",
            side_table,
        ]
    lines += floor_markdown(results)
    troubled = [(run, problems(run)) for run in results["runs"] if problems(run)]
    if troubled:
        lines.append("**Runs whose figures cannot be trusted:**")
        lines.append("")
        lines += ["- %s n=%d c=%d: %s" % (run["path"], run["n"], run["concurrency"], "; ".join(found))
                  for run, found in troubled]
        lines.append("")
    return "\n".join(lines)


def replicas_sentence(replicas: int) -> str:
    """Said only when there is more than one: a service's CPU is then its replicas' together, its RSS the largest's."""
    if replicas <= 1:
        return ""
    return (" %d replicas of each square service: a square service's CPU is its replicas' added up, its peak RSS "
            "the largest replica's." % replicas)


def write_summary(results_dir: str, results: Dict) -> str:
    target = os.path.join(results_dir, "summary.md")
    with open(target, "w") as handle:
        handle.write(summary_markdown(results))
    return target


def machine_line(env: Dict) -> str:
    parts = [env.get("cpu_model") or "unknown CPU", "%s cores" % env.get("cores"),
             "%s GiB" % env.get("memory_gib"), env.get("os"), env.get("jdk"), env.get("ab")]
    return ", ".join(str(p) for p in parts if p)


def markdown_table(header: List[str], rows: List[List[str]]) -> str:
    """A Markdown table, which also reads well in a terminal."""
    return "\n".join("| " + " | ".join(row) + " |" for row in [header, ["---"] * len(header)] + rows) + "\n"


def _ms(value: Optional[float]) -> str:
    return "-" if value is None else "%.1f" % value


def _number(value, pattern: str) -> str:
    return "-" if value is None else pattern % value


def _cpu_cell(entry: Optional[Dict]) -> str:
    if not entry:
        return "-"
    return "%.0f %% (%.2f s)" % (entry["percent"], entry["seconds"])
