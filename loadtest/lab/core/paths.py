"""Where things are, once: the lab's folder (loadtest/), the repository, and the files the lab reads from them."""

import os

# loadtest/, with run.sh, the lab's package, its report templates and its results.
LAB_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REPO = os.path.dirname(LAB_DIR)
# Every run's folder goes under it, unless RESULTS_DIR or --out says otherwise.
RESULTS = os.path.join(LAB_DIR, "results")
# The report's templates and chart code (lab.results.report).
REPORT_TEMPLATES = os.path.join(LAB_DIR, "report")
# Chart.js and its annotation plugin, which the loadtest module's build unpacks here and the report inlines.
REPORT_SCRIPTS = os.path.join(LAB_DIR, "target", "report-scripts")
CHART_JS = os.path.join(REPORT_SCRIPTS, "chart.umd.min.js")
ANNOTATION_JS = os.path.join(REPORT_SCRIPTS, "chartjs-plugin-annotation.min.js")
# How to get them (lab.host.tools.ensure_scripts runs it).
FETCH_SCRIPTS = ["./mvnw", "-B", "-q", "-pl", "loadtest", "generate-resources"]
# The services' own JVM options, as `java @jvm.options` reads them.
JVM_OPTIONS = os.path.join(REPO, "jvm.options")
# The aggregator's own settings, read for the deadlines it is started with (lab.stage.deadlines).
AGGREGATOR_YML = os.path.join(REPO, "aggregator-core", "src", "main", "resources", "application.yml")
