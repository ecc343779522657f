"""report.html: one self-contained page with the results, Chart.js and the chart code inlined.

Chart.js comes from npm at the version pinned in loadtest/report/package-lock.json, installed with
`npm ci` on first use; inlining it keeps the report readable offline, straight from disk.
"""

import json
import os
import shutil
import subprocess
from typing import Dict

from . import results

REPORT_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "report")
CHART_JS = os.path.join(REPORT_DIR, "node_modules", "chart.js", "dist", "chart.umd.min.js")
INSTALL_HINT = "cd %s && npm ci" % REPORT_DIR


class ReportError(Exception):
    """The report cannot be written; the message says what to run."""


def ensure_chartjs() -> str:
    """The path of the pinned Chart.js build, installing it with `npm ci` when it is missing or another version."""
    if _installed_version() != _pinned_version():
        if shutil.which("npm") is None:
            raise ReportError("Chart.js is not installed and npm is missing: install Node.js and npm "
                              "(Debian: apt-get install -y npm), then run: %s" % INSTALL_HINT)
        print("[lab] installing Chart.js %s for the report (npm ci)" % _pinned_version(), flush=True)
        done = subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=REPORT_DIR,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if done.returncode != 0 or _installed_version() != _pinned_version():
            raise ReportError("npm ci failed (exit %d): %s\nRun it by hand: %s"
                              % (done.returncode, done.stdout.strip()[-800:], INSTALL_HINT))
    return CHART_JS


def render(data: Dict, chart_js: str) -> str:
    """The report page for results.json's data."""
    template = _read(os.path.join(REPORT_DIR, "template.html"))
    parts = {
        # "</" would end the <script> element early: JSON allows escaping the slash.
        "__RESULTS_JSON__": json.dumps(data, separators=(",", ":")).replace("</", "<\\/"),
        "__CHART_JS__": _script_safe(chart_js),
        "__CHARTS_JS__": _script_safe(_read(os.path.join(REPORT_DIR, "charts.js"))),
    }
    for placeholder, text in parts.items():
        before, found, after = template.partition(placeholder)
        if not found:
            raise ReportError("template.html has no %s" % placeholder)
        template = before + text + after
    return template


def write(results_dir: str) -> str:
    """Writes results_dir/report.html from results_dir/results.json."""
    chart_js = _read(ensure_chartjs())
    target = os.path.join(results_dir, "report.html")
    with open(target, "w") as handle:
        handle.write(render(results.read_json(results_dir), chart_js))
    return target


def _script_safe(source: str) -> str:
    if "</script" in source.lower():
        raise ReportError("a script to inline contains '</script'")
    return source


def _pinned_version() -> str:
    with open(os.path.join(REPORT_DIR, "package-lock.json")) as handle:
        return json.load(handle)["packages"]["node_modules/chart.js"]["version"]


def _installed_version():
    try:
        with open(os.path.join(REPORT_DIR, "node_modules", "chart.js", "package.json")) as handle:
            return json.load(handle)["version"]
    except (OSError, ValueError, KeyError):
        return None


def _read(path: str) -> str:
    with open(path) as handle:
        return handle.read()
