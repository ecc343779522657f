"""The results rendered: report.html, one self-contained page with the results, their view, Chart.js and the chart
code inlined; and summary.md, the same view as Markdown.

Chart.js and its annotation plugin come from their WebJars, at the versions in the root pom.xml: the loadtest
module's build unpacks them into loadtest/target/report-scripts (tools.FETCH_COMMAND). Inlining them keeps the report
readable offline, straight from disk.
"""

import json
import os
from typing import Dict, List, Optional

from . import results, tools, view
from .errors import ReportError
from .results import markdown, problems, run_name

LAB_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPORT_DIR = os.path.join(LAB_DIR, "report")


def render(data: Dict, chart_js: str, annotation_js: str) -> str:
    """The report page for results.json's data."""
    template = _read(os.path.join(REPORT_DIR, "template.html"))
    parts = {
        "__RESULTS_JSON__": _json(data),
        "__VIEW_JSON__": _json(view.view(data)),
        "__CHART_JS__": _script_safe(chart_js),
        "__ANNOTATION_JS__": _script_safe(annotation_js),
        "__CHARTS_JS__": _script_safe(_read(os.path.join(REPORT_DIR, "charts.js"))),
    }
    for placeholder, text in parts.items():
        before, found, after = template.partition(placeholder)
        if not found:
            raise ReportError("template.html has no %s" % placeholder)
        template = before + text + after
    return template


def write(results_dir: str, fetch: bool = False) -> str:
    """Writes results_dir/report.html from results_dir/results.json."""
    tools.ensure_scripts(fetch)
    target = os.path.join(results_dir, "report.html")
    with open(target, "w") as handle:
        handle.write(render(results.read_json(results_dir), _read(tools.CHART_JS), _read(tools.ANNOTATION_JS)))
    return target


def _json(value) -> str:
    # "</" would end the <script> element early: JSON allows escaping the slash.
    return json.dumps(value, separators=(",", ":")).replace("</", "<\\/")


def _script_safe(source: str) -> str:
    if "</script" in source.lower():
        raise ReportError("a script to inline contains '</script'")
    return source


def _read(path: str) -> str:
    with open(path) as handle:
        return handle.read()


def floor_markdown(floor_view: Optional[Dict], tables: Dict) -> List[str]:
    """summary.md's "Transport floor" section: what the floor is, each path against it, and the floor runs."""
    if floor_view is None:
        return []
    lines = [
        "## Transport floor",
        "",
        floor_view["subtitle"] + " Fraction of floor: the path's downstream calls per "
        "second (req/s × n) ÷ its transport's floor calls per second. CPU per call: the path's services "
        "(aggregator and square service) against the floor's client and server, each over its measured run. "
        "Load: the one-minute load average before the path's run, and when the floor's measuring began.",
        "",
    ]
    table = markdown(tables["floor"])
    lines += (
        [table]
        if tables["floor"]["rows"]
        else ["No measured path has a floor (rest/square is a baseline; n=0 makes no calls).", ""]
    )
    lines += ["The floor runs:", "", markdown(tables["floor_runs"])]
    return lines


def summary_markdown(results: Dict) -> str:
    env, settings = results["environment"], results["settings"]
    page = view.view(results)
    tables = page["tables"]
    # The answer first, in words; the figures it comes from follow.
    lines = (
        ["# REST vs gRPC load-test results", ""]
        + ["- " + sentence for sentence in page["verdict"]]
        + ([""] if page["verdict"] else [])
        + [
            "%s, on %s." % (results.get("finished_at") or results.get("started_at"), machine_line(env)),
            "",
            load_sentence(settings) + " Everything runs on this one machine; CPU %% is of one core (%d cores = %d %%), "
            "CPU seconds cover exactly the measured run."
            % (env["cores"] or 0, (env["cores"] or 0) * 100)
            + repeats_sentence(settings.get("repeats", 1))
            + replicas_sentence(settings.get("replicas", 1)),
            "",
        ]
        + ["- Stack **%s**: %s." % (entry["label"], view.stack_text(entry)) for entry in settings.get("stacks") or []]
        + [
            "",
            markdown(tables["runs"]),
            "## CPU and memory",
            "",
            "Per process: CPU as % of one core, and CPU seconds over the measured run. Per request and per call: the "
            "CPU of the services that served the path, together. Peak RSS in the order of the service columns.",
            "",
            markdown(tables["resources"]),
        ]
    )
    if tables["payload"]:
        lines += [
            "## Payload shapes",
            "",
            "Each payload shape and path: req/s, the CPU per call of the services that "
            "served it, and the bytes one call moved at the square service, request and response (TCP payload: "
            "JSON and HTTP/1.1 or HTTP/2 over REST, protobuf and HTTP/2 over gRPC).",
            "",
            markdown(tables["payload"]),
        ]
    if tables["network"]:
        profiles = page["network"]["profiles"]
        lines += (
            [
                "## Networks",
                "",
                "Each path's req/s and p50 on each network (NETWORK), between the aggregator and the square services:",
                "",
            ]
            + ["- " + profile for profile in profiles]
            + ["", markdown(tables["network"])]
        )
    if tables["comparisons"]:
        lines += [
            "## Side by side",
            "",
            "Each pair of paths at the same n and setting: the first one's req/s and CPU "
            "per downstream call, as a multiple of the second one's.",
            "",
            markdown(tables["comparisons"]),
        ]
    if tables["server_side"]:
        lines += [
            "## Server side",
            "",
            "The services' own metrics (`/actuator/prometheus`), read right before and right after each measured "
            "run. Aggregator: its successful requests and their mean time; the downstream calls (stream messages) "
            "it made and one's mean time as its client sees it, send to answer. Square service: the calls "
            "(messages) it served and its own mean processing time of one. On the streams that time (≤) is an "
            "upper bound: the server times whole streams, which include waiting for the client's next message. On "
            "the pipelined grpc/stream the client's time per message (≤) is the aggregator's time per request over "
            "n, also an upper bound: a message's own send-to-answer time there includes its wait behind the others.",
            "",
            markdown(tables["server_side"]),
        ]
    lines += floor_markdown(page["floor"], tables)
    if page["mix"]:
        lines += [
            "## Mixed traffic: each path beside the others vs alone",
            "",
            page["mix"]["how"],
            "",
            markdown(page["mix"]["table"]),
        ]
    if page["soak"]:
        lines += [
            "## Soak",
            "",
            page["soak"]["how"],
            "",
            markdown(page["soak"]["flatness"]),
            markdown(page["soak"]["minutes"]),
        ]
    troubled = [(run, problems(run)) for run in results["runs"] if problems(run)]
    if troubled:
        lines.append("**Runs whose figures cannot be trusted:**")
        lines.append("")
        lines += ["- %s: %s" % (run_name(run), "; ".join(found)) for run, found in troubled]
        lines.append("")
    return "\n".join(lines)


def load_sentence(settings: Dict) -> str:
    """How each run sent its load."""
    if settings.get("load") == "open":
        return (
            "Each run: `%s` (an open loop: requests leave on schedule whatever the answers; latency from each "
            "request's intended send time), after a discarded warm-up of %gs at the same rate; req/s is the "
            "goodput, correct answers per second." % (settings["vegeta_command"], settings["warmup_s"])
        )
    return (
        "Each run: `%s`, after a discarded warm-up of %gs at the same concurrency. ab speaks HTTP/1.0 without "
        "keep-alive (a new connection per request), as in the article." % (settings["ab_command"], settings["warmup_s"])
    )


def repeats_sentence(repeated: int) -> str:
    if repeated <= 1:
        return ""
    return (
        " Every combination ran %d times, interleaved; each figure is the median of its repeats, with their "
        "range for req/s and p99, and a run whose req/s spread ((max - min) / median) is above 10 %% is in bold."
        % repeated
    )


def replicas_sentence(replicas: int) -> str:
    """Said only when there is more than one: a service's CPU is then its replicas' together, its RSS the largest's."""
    if replicas <= 1:
        return ""
    return (
        " %d replicas of each square service: a square service's CPU is its replicas' added up, its peak RSS "
        "the largest replica's." % replicas
    )


def write_summary(results_dir: str, results: Dict) -> str:
    target = os.path.join(results_dir, "summary.md")
    with open(target, "w") as handle:
        handle.write(summary_markdown(results))
    return target


def machine_line(env: Dict) -> str:
    parts = [
        env.get("cpu_model") or "unknown CPU",
        "%s cores" % env.get("cores"),
        "%s GiB" % env.get("memory_gib"),
        env.get("os"),
        env.get("jdk"),
        env.get("load_generator") or env.get("ab"),
    ]
    return ", ".join(str(p) for p in parts if p)
