"""The results rendered through the Jinja2 templates of loadtest/report/, which hold every sentence; lab/results/view.py
computes the figures. report.html (template.html): one self-contained page with its text and tables, the charts' data,
Chart.js and the chart code (charts.js) inlined. summary.md (summary.md.j2): the same view as Markdown.

Chart.js and its annotation plugin come from their WebJars, at the versions in the root pom.xml: the loadtest
module's build unpacks them into loadtest/target/report-scripts (lab.core.paths.FETCH_SCRIPTS). Inlining them keeps
the report
readable offline, straight from disk.
"""

import json
import os
from typing import Dict, List

import jinja2
from markupsafe import Markup

from ..core import paths, records, repeats
from ..core.errors import ReportError
from ..core.paths import REPORT_TEMPLATES
from ..core.records import problems, run_name
from . import compare, results, view
from .results import markdown

REPORT_DIR = REPORT_TEMPLATES

_ENVIRONMENT = jinja2.Environment(
    loader=jinja2.FileSystemLoader(REPORT_DIR),
    # HTML templates escape what they print; Markdown and plain text print it as it is.
    autoescape=jinja2.select_autoescape(["html"]),
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=True,
    undefined=jinja2.StrictUndefined,
)
_ENVIRONMENT.filters.update(markdown=markdown, g=lambda value: "%g" % value)


def fill(name: str, **facts) -> str:
    """One template of loadtest/report/ filled with the facts."""
    return _ENVIRONMENT.get_template(name).render(**facts)


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
    "tls",
)


def render(data: Dict, chart_js: str, annotation_js: str) -> str:
    """The report page for results.json's data: report/template.html filled with the view."""
    page, settings = view.view(data), data["settings"]
    return fill(
        "template.html",
        page=page,
        tables=page["tables"],
        data=data,
        settings=settings,
        env=data["environment"],
        listed={name: records.listed(settings, name) for name in ("payload", "network", "stack")},
        cores=data["environment"].get("cores") or 1,
        floor_section=data.get("floor"),
        payloads=records.listed(settings, "payload"),
        networks=records.listed(settings, "network"),
        network_texts=[
            (name, view.network_text(name, profile)) for name, profile in (settings.get("networks") or {}).items()
        ],
        stacks=stacks(settings),
        text=view.text,
        # The notes' facts ("How to read this").
        open_loop=settings.get("load") == "open",
        repeats=settings.get("repeats", 1),
        parts=parts_per_repeat(data),
        spread_limit=repeats.SPREAD_LIMIT_PERCENT,
        rss_reset=all(run.get("rss_scope") == "run" for run in data["runs"] if "error" not in run),
        shown=view.conditions_shown(settings),
        proxied=any((profile or {}).get("proxied") for profile in (settings.get("networks") or {}).values()),
        results_json=_json(data),
        charts_json=_json({key: page[key] for key in CHART_KEYS}),
        chart_js=_script_safe(chart_js),
        annotation_js=_script_safe(annotation_js),
        charts_js=_script_safe(_read(os.path.join(REPORT_DIR, "charts.js"))),
    )


def write(results_dir: str) -> str:
    """Writes results_dir/report.html from results_dir/results.json, with Chart.js and its plugin inlined
    (lab.host.tools fetches them)."""
    missing = [path for path in (paths.CHART_JS, paths.ANNOTATION_JS) if not os.path.isfile(path)]
    if missing:
        raise ReportError(
            "Chart.js and its annotation plugin are not unpacked (%s missing); fetch them with: cd %s && %s"
            % (", ".join(missing), paths.REPO, " ".join(paths.FETCH_SCRIPTS))
        )
    target = os.path.join(results_dir, "report.html")
    with open(target, "w") as handle:
        handle.write(render(results.read_json(results_dir), _read(paths.CHART_JS), _read(paths.ANNOTATION_JS)))
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
    text = fill(
        "summary.md.j2",
        page=page,
        tables=page["tables"],
        settings=settings,
        open_loop=settings.get("load") == "open",
        when=results.get("finished_at") or results.get("started_at"),
        machine=machine_line(env),
        cores=env["cores"] or 0,
        repeats=settings.get("repeats", 1),
        parts=parts_per_repeat(results),
        replicas=settings.get("replicas", 1),
        stacks=stacks(settings),
        troubled=[(run_name(run), problems(run)) for run in results["runs"] if problems(run)],
    )
    return text.rstrip("\n") + "\n"


def parts_per_repeat(data: Dict) -> int:
    """The most parts a repeat of the run was measured in (lab.measure.bench.add_up): 1 when each was one stretch."""
    return max((repeat.get("parts") or 1 for run in data["runs"] for repeat in run.get("repeats") or []), default=1)


def stacks(settings: Dict) -> List[Dict]:
    """Each stack of the run, its label and how the pages describe it."""
    targeted = bool(settings.get("target"))
    return [
        {"label": entry["label"], "text": view.stack_text(entry, targeted)} for entry in settings.get("stacks") or []
    ]


def write_summary(results_dir: str, results: Dict) -> str:
    target = os.path.join(results_dir, "summary.md")
    with open(target, "w") as handle:
        handle.write(summary_markdown(results))
    return target


def quota_words(env: Dict) -> str:
    """What a CPU quota left of the machine's cores, said beside them; nothing when there was none."""
    quota = env.get("cpu_quota_cores")
    return " (limited to %g core%s by a CPU quota)" % (quota, "" if quota == 1 else "s") if quota else ""


_ENVIRONMENT.globals.update(quota_words=quota_words)


def machine_line(env: Dict) -> List[str]:
    parts = [
        env.get("cpu_model") or "unknown CPU",
        "%s cores" % env["cores"] + quota_words(env) if env.get("cores") else None,
        "%s GiB" % env["memory_gib"] if env.get("memory_gib") else None,
        env.get("os"),
        env.get("jdk"),
        env.get("load_generator") or env.get("ab"),
    ]
    return [str(part) for part in parts if part]


def write_comparison(results_dir: str, comparison: Dict) -> str:
    """Writes results_dir/comparison.json and comparison.md (report/comparison.md.j2); the Markdown's path."""
    with open(os.path.join(results_dir, compare.COMPARISON_JSON), "w", encoding="utf-8") as handle:
        json.dump(comparison, handle, indent=2, ensure_ascii=False)
        handle.write("\n")
    text = fill(
        "comparison.md.j2",
        comparison=comparison,
        old=comparison["old"],
        new=comparison["new"],
        differences=comparison["differences"],
        table=compare.table(comparison, view.fmt),
    )
    target = os.path.join(results_dir, compare.COMPARISON_MD)
    with open(target, "w", encoding="utf-8") as handle:
        handle.write(text.rstrip("\n") + "\n")
    return target
