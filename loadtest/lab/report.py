"""The results rendered: report.html, one self-contained page with the results, their view, Chart.js and the chart
code inlined; and summary.md, the same view as Markdown.

Chart.js and its annotation plugin come from their WebJars, at the versions in the root pom.xml: the loadtest
module's build unpacks them into loadtest/target/report-scripts (tools.FETCH_COMMAND). Inlining them keeps the report
readable offline, straight from disk.
"""

import json
import os
from typing import Dict, List

from markupsafe import Markup

from . import results, templates, tools, view
from .errors import ReportError
from .results import problems, run_name

# What report/charts.js reads of the view: the charts' data. The text and tables are in the page itself.
CHART_KEYS = (
    "run_labels",
    "services",
    "combos",
    "points",
    "curves",
    "ranges",
    "load_generator",
    "sweep",
    "sweep_axis",
    "cpu_utilisation",
    "call_time",
    "floor",
    "payload",
    "network",
)


def render(data: Dict, chart_js: str, annotation_js: str) -> str:
    """The report page for results.json's data: report/template.html filled with the view."""
    page, settings = view.view(data), data["settings"]
    return templates.render(
        "template.html",
        page=page,
        tables=page["tables"],
        settings=settings,
        env=data["environment"],
        cores=data["environment"].get("cores") or 1,
        floor_section=data.get("floor"),
        payloads=results.listed(settings, "payload"),
        networks=results.listed(settings, "network"),
        network_texts=[
            (name, view.network_text(name, profile)) for name, profile in (settings.get("networks") or {}).items()
        ],
        stacks=stacks(settings),
        text=view.text,
        results_json=_json(data),
        charts_json=_json({key: page[key] for key in CHART_KEYS}),
        chart_js=_script_safe(chart_js),
        annotation_js=_script_safe(annotation_js),
        charts_js=_script_safe(_read(os.path.join(templates.REPORT_DIR, "charts.js"))),
    )


def write(results_dir: str, fetch: bool = False) -> str:
    """Writes results_dir/report.html from results_dir/results.json."""
    tools.ensure_scripts(fetch)
    target = os.path.join(results_dir, "report.html")
    with open(target, "w") as handle:
        handle.write(render(results.read_json(results_dir), _read(tools.CHART_JS), _read(tools.ANNOTATION_JS)))
    return target


def _json(value) -> Markup:
    # "</" would end the <script> element early: JSON allows escaping the slash.
    return Markup(json.dumps(value, separators=(",", ":")).replace("</", "<\\/"))


def _script_safe(source: str) -> Markup:
    if "</script" in source.lower():
        raise ReportError("a script to inline contains '</script'")
    return Markup(source)


def _read(path: str) -> str:
    with open(path) as handle:
        return handle.read()


def summary_markdown(results: Dict) -> str:
    """summary.md: report/summary.md.j2 filled with the view's tables and the run's facts."""
    env, settings = results["environment"], results["settings"]
    page = view.view(results)
    text = templates.render(
        "summary.md.j2",
        page=page,
        tables=page["tables"],
        settings=settings,
        open_loop=settings.get("load") == "open",
        when=results.get("finished_at") or results.get("started_at"),
        machine=machine_line(env),
        cores=env["cores"] or 0,
        repeats=settings.get("repeats", 1),
        replicas=settings.get("replicas", 1),
        stacks=stacks(settings),
        troubled=[(run_name(run), problems(run)) for run in results["runs"] if problems(run)],
    )
    return text.rstrip("\n") + "\n"


def stacks(settings: Dict) -> List[Dict]:
    """Each stack of the run, its label and how the pages describe it."""
    return [{"label": entry["label"], "text": view.stack_text(entry)} for entry in settings.get("stacks") or []]


def write_summary(results_dir: str, results: Dict) -> str:
    target = os.path.join(results_dir, "summary.md")
    with open(target, "w") as handle:
        handle.write(summary_markdown(results))
    return target


def machine_line(env: Dict) -> List[str]:
    parts = [
        env.get("cpu_model") or "unknown CPU",
        "%s cores" % env.get("cores"),
        "%s GiB" % env.get("memory_gib"),
        env.get("os"),
        env.get("jdk"),
        env.get("load_generator") or env.get("ab"),
    ]
    return [str(part) for part in parts if part]
