"""report.html: one self-contained page with the results, their view, Chart.js and the chart code inlined.

Chart.js and its annotation plugin come from their WebJars, at the versions in the root pom.xml: the loadtest
module's build unpacks them into loadtest/target/report-scripts (FETCH_COMMAND). Inlining them keeps the report
readable offline, straight from disk.
"""

import json
import os
import subprocess
from typing import Dict

from . import results, view

LAB_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO_DIR = os.path.dirname(LAB_DIR)
REPORT_DIR = os.path.join(LAB_DIR, "report")
SCRIPTS_DIR = os.path.join(LAB_DIR, "target", "report-scripts")
CHART_JS = os.path.join(SCRIPTS_DIR, "chart.umd.min.js")
ANNOTATION_JS = os.path.join(SCRIPTS_DIR, "chartjs-plugin-annotation.min.js")
FETCH_COMMAND = ["./mvnw", "-B", "-q", "-pl", "loadtest", "generate-resources"]
FETCH_HINT = "cd %s && %s" % (REPO_DIR, " ".join(FETCH_COMMAND))


class ReportError(Exception):
    """The report cannot be written; the message says what to run."""


def ensure_scripts(fetch: bool = False) -> None:
    """Fails, saying what to run, when Chart.js or its annotation plugin is missing; with fetch, runs that first."""
    if fetch and _missing():
        print("[lab] fetching Chart.js and its annotation plugin for the report (%s)" % " ".join(FETCH_COMMAND),
              flush=True)
        done = subprocess.run(FETCH_COMMAND, cwd=REPO_DIR, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if done.returncode != 0:
            raise ReportError("Maven could not fetch them (exit %d): %s\nRun it by hand: %s"
                              % (done.returncode, done.stdout.strip()[-800:], FETCH_HINT))
    missing = _missing()
    if missing:
        raise ReportError("Chart.js and its annotation plugin are not unpacked (%s missing); fetch them with: %s"
                          % (", ".join(missing), FETCH_HINT))


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
    ensure_scripts(fetch)
    target = os.path.join(results_dir, "report.html")
    with open(target, "w") as handle:
        handle.write(render(results.read_json(results_dir), _read(CHART_JS), _read(ANNOTATION_JS)))
    return target


def _missing():
    return [os.path.relpath(path, REPO_DIR) for path in (CHART_JS, ANNOTATION_JS) if not os.path.isfile(path)]


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
