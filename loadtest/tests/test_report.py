"""report.html: self-contained, and really drawn by a real browser (headless Chromium).

Without Chromium the browser tests are skipped with a message, except under CI=true, where they fail:
CI must prove that the report renders.
"""

import html
import json
import os
import re
import shutil
import subprocess
import tempfile
import unittest

from lab.core.errors import ToolMissing
from lab.host import tools
from lab.results import floors, report, results, view

from tests.support import (
    FLOOR_SCALE,
    report_texts,
    sample_conditions,
    sample_open_results,
    sample_results,
    sample_with_floor,
)

IN_CI = os.environ.get("CI", "").lower() == "true"
BROWSER_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--virtual-time-budget=10000",
]


def find_browser():
    for name in (os.environ.get("CHROMIUM"), "chromium", "chromium-browser", "google-chrome"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


def unavailable(test, what):
    """Skips, or fails in CI, when a tool the browser tests need is missing."""
    message = "%s, so the report's browser tests cannot run" % what
    if IN_CI:
        test.fail("CI=true, so this must not be skipped: " + message)
    test.skipTest(message)


def write_report(folder, data, older=False):
    """Writes data's report; older: its results.json as an older lab wrote it, which today's schema need not pass."""
    os.makedirs(folder, exist_ok=True)
    if older:
        with open(os.path.join(folder, "results.json"), "w") as handle:
            json.dump(data, handle)
    else:
        results.write_json(folder, data)
    return report.write(folder)


class SelfContainedTests(unittest.TestCase):
    def test_the_page_loads_nothing_from_elsewhere(self):
        page = report.render(sample_results(), "/* Chart.js would be here */", "/* and its annotation plugin */")

        self.assertIsNone(re.search(r"<(script|link|img)[^>]+(src|href)=", page))
        self.assertNotIn("__RESULTS_JSON__", page)

    def test_data_cannot_end_the_script_element_early(self):
        data = sample_results()
        data["settings"]["aggregator_args"] = "</script><script>alert(1)</script>"

        page = report.render(data, "", "")

        self.assertNotIn("</script><script>alert(1)", page)
        self.assertIn("<\\/script><script>alert(1)<\\/script>", page)


class ViewTests(unittest.TestCase):
    def test_numbers_round_their_decimal_form_half_up_as_a_browser_does(self):
        self.assertEqual(
            [view.fmt(0.975, 2), view.fmt(180.5, 0), view.fmt(1433.77, 1), view.fmt(None, 1)],
            ["0.98", "181", "1,433.8", "–"],
        )
        self.assertEqual([view.ms(8.864), view.ms(57.664), view.ms(5760.0)], ["8.86 ms", "57.7 ms", "5.76 s"])

    def test_the_call_time_chart_draws_the_pipelined_stream_per_message_as_upper_bounds(self):
        call_time = view.view(sample_results())["call_time"]

        # grpc/stream: its 250 ms a request over its 1,000 messages, not a message's send to answer in the pipeline.
        shown = ("labels", "client", "client_bound", "server", "server_bound")
        self.assertEqual(
            {key: call_time[key] for key in shown},
            {
                "labels": ["rest/unary", "grpc/unary", "grpc/stream"],
                "client": [1900.0, 1900.0, 250.0],
                "client_bound": [False, False, True],
                "server": [40.0, 40.0, 300.0],
                "server_bound": [False, False, True],
            },
        )

    def test_a_run_that_cannot_be_trusted_says_why_in_the_same_words_as_summary_md(self):
        data = sample_results()
        data["runs"][1]["verified"] = False

        shown = view.view(data)

        self.assertEqual(
            report_texts(data, '<div class="alert">'),
            ["1 run(s) had failures, so their figures are not comparable: grpc/unary (the answer was not verified)"],
        )
        self.assertEqual(
            {key: shown["tables"]["runs"]["rows"][1][key] for key in ("class", "title")},
            {"class": "bad", "title": "the answer was not verified"},
        )
        self.assertIn("grpc/unary n=1000 c=100: the answer was not verified", report.summary_markdown(data))


class ConditionsViewTests(unittest.TestCase):
    """Payload shapes and networks: what the page says of them, computed once."""

    def test_the_default_run_names_no_shape_and_no_network_and_has_no_sections_for_them(self):
        shown = view.view(sample_results())

        self.assertEqual(shown["run_labels"], ["rest/unary", "grpc/unary", "grpc/stream"])
        self.assertEqual(
            (shown["payload"], shown["network"], shown["tables"]["payload"], shown["tables"]["network"]),
            (None, None, None, None),
        )
        self.assertEqual(shown["tables"]["runs"]["heads"][:3], ["path", "n", "concurrency"])
        self.assertNotIn("payload", report_texts(sample_results(), '<p class="subtitle" id="subtitle">')[0])

    def test_each_shape_and_path_with_its_bytes_and_cpu_per_call(self):
        shown = view.view(sample_conditions())

        self.assertEqual(
            shown["payload"]["categories"],
            ["small · loopback", "small · lan", "collection · loopback", "collection · lan"],
        )
        rest = shown["payload"]["paths"][0]
        self.assertEqual(
            (rest["path"], rest["request"], rest["response"]),
            ("rest/unary", [108.0, 108.0, 5650.0, 5650.0], [110.0, 110.0, 5660.0, 5660.0]),
        )
        table = shown["tables"]["payload"]
        self.assertEqual(
            table["heads"],
            [
                "payload",
                "path",
                "network",
                "n",
                "concurrency",
                "req/s",
                "service CPU / call",
                "request bytes / call",
                "response bytes / call",
            ],
        )
        self.assertEqual(
            [row["cells"] for row in table["rows"][4:6]],
            [
                ["collection", "rest/unary", "loopback", "20", "1", "716.88", "48.8 µs", "5,650.0", "5,660.0"],
                ["collection", "grpc/stream", "loopback", "20", "1", "82.41", "364.3 µs", "2,420.0", "2,426.0"],
            ],
        )

    def test_each_path_against_the_networks_in_their_order(self):
        shown = view.view(sample_conditions())

        self.assertEqual(shown["network"]["networks"], ["loopback", "lan"])
        self.assertEqual(
            shown["network"]["lines"][1],
            {
                "path": "rest/unary",
                "label": "rest/unary · collection",
                "dash": 1,
                "rps": [716.88, 645.19],
                "p50": [57.664, 63.43],
            },
        )
        self.assertEqual(
            shown["network"]["profiles"][1],
            "lan: LAN: 0.5 ms round trip, 1 Gbit/s each way; request "
            "deadline 121 s, call deadline 11 s, load generator "
            "timeout 121 s",
        )
        self.assertEqual(
            shown["tables"]["network"]["rows"][0]["cells"],
            ["rest/unary", "small", "20", "1", "1,433.77", "57.7 ms", "1,290.39", "63.4 ms"],
        )

    def test_runs_are_told_apart_by_shape_and_network_and_the_cards_are_the_first_ones(self):
        shown = view.view(sample_conditions())

        self.assertEqual(
            shown["run_labels"][:2], ["rest/unary · small · loopback", "rest/unary · collection · loopback"]
        )
        self.assertEqual([card["what"] for card in shown["cards"]], ["20 squares per request · small · loopback"] * 2)
        self.assertEqual(shown["tables"]["runs"]["heads"][:5], ["path", "payload", "network", "n", "concurrency"])
        self.assertIn(
            " · payload small, collection · network loopback, lan · ",
            report_texts(sample_conditions(), '<p class="subtitle" id="subtitle">')[0],
        )

    def test_the_proxys_cpu_stands_beside_the_services_with_cpu_per_call_with_and_without_it(self):
        table = view.view(sample_conditions())["tables"]["resources"]

        self.assertEqual(
            table["heads"][5:9], ["aggregator-service", "square-rest-service", "square-grpc-service", "toxiproxy"]
        )
        with_proxy = table["heads"].index("with the proxy / call")
        self.assertEqual([row["cells"][with_proxy] for row in table["rows"][3:5]], ["–", "53.8 µs"])
        self.assertEqual(table["rows"][4]["cells"][table["heads"].index("service CPU / call")], "48.8 µs")


class BrowserRenderTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.browser = find_browser()
        cls.folder = tempfile.mkdtemp(prefix="lab-report-test-")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.folder, ignore_errors=True)

    def setUp(self):
        if not self.browser:
            unavailable(self, "Chromium is not installed (Debian: apt-get install -y chromium)")
        try:
            tools.ensure_scripts()
        except ToolMissing as error:
            unavailable(self, str(error))

    def chromium(self, page, *args):
        profile = tempfile.mkdtemp(prefix="profile-", dir=self.folder)
        done = subprocess.run(
            [self.browser, *BROWSER_FLAGS, "--user-data-dir=" + profile, *args, "file://" + page],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
            cwd=self.folder,
        )
        self.assertEqual(done.returncode, 0, done.stderr[-2000:])
        return done.stdout

    def test_a_sweep_report_draws_all_seven_charts(self):
        page = write_report(os.path.join(self.folder, "sweep"), sample_results(concurrency=(1, 8), n_values=(10, 100)))

        dom = self.chromium(page, "--dump-dom")

        self.assertIn('data-charts-rendered="7"', dom)
        self.assertIn("Against concurrency (sweep)", dom)
        self.assertNotIn('<section id="sweep" hidden', dom)

    def test_an_open_loop_rate_sweep_draws_goodput_latency_and_errors_against_offered_rate(self):
        charts = self.probe(write_report(os.path.join(self.folder, "open-sweep"), sample_open_results()))

        # The latency curve of each run from its HdrHistogram percentiles; the three sweep charts.
        self.assertEqual(
            {name: chart["datasets"] for name, chart in charts.items()},
            {
                "chart-throughput": 3,
                "chart-latency-curve": 6,
                "chart-cpu-per-request": 4,
                "chart-cpu-utilisation": 6,
                "chart-call-time": 2,
                "chart-sweep-throughput": 4,
                "chart-sweep-latency": 6,
                "chart-sweep-errors": 3,
            },
        )
        for name, chart in charts.items():
            with self.subTest(chart=name):
                self.assertGreater(chart["coloured_pixels"], 500, "hardly any colour: the chart drew nothing")

    def test_the_range_of_the_repeats_is_drawn_as_a_whisker_over_each_bar(self):
        data = sample_results()
        plain = self.probe(write_report(os.path.join(self.folder, "no-whiskers"), data))["chart-throughput"]
        for run in data["runs"]:
            run["repeats"] = [{"rps": run["rps"] * factor} for factor in (0.5, 1.0, 1.5)]
        whiskers = self.probe(write_report(os.path.join(self.folder, "whiskers"), data))["chart-throughput"]

        # The whiskers are near-black lines over the bars: dark pixels that a chart without ranges does not have.
        self.assertGreater(whiskers["dark_pixels"], plain["dark_pixels"] + 100)

    def test_payload_shapes_and_networks_draw_their_charts_and_tables(self):
        charts = self.probe(write_report(os.path.join(self.folder, "conditions"), sample_conditions()))

        # Bytes: a request and a response dataset per path, stacked; CPU per call: one per path. Against the
        # network: one line per path and shape.
        self.assertEqual(
            {name: chart["datasets"] for name, chart in charts.items()},
            {
                "chart-throughput": 2,
                "chart-latency-curve": 8,
                "chart-cpu-per-request": 5,
                "chart-cpu-utilisation": 7,
                "chart-call-time": 2,
                "chart-payload-bytes": 4,
                "chart-payload-cpu": 2,
                "chart-network-throughput": 4,
                "chart-network-latency": 4,
            },
        )
        for name, chart in charts.items():
            with self.subTest(chart=name):
                self.assertGreater(chart["coloured_pixels"], 500, "hardly any colour: the chart drew nothing")
        dom = self.chromium(os.path.join(self.folder, "conditions", "report.html"), "--dump-dom")
        self.assertIn('<section id="payload-section">', dom)
        self.assertIn('<section id="network-section">', dom)
        self.assertIn(
            "collection</td><td>grpc/stream</td><td>loopback</td><td>20</td><td>1</td><td>82.41</td>"
            "<td>364.3 µs</td><td>2,420.0</td><td>2,426.0</td>",
            dom,
        )
        self.assertIn("<li>lan: LAN: 0.5 ms round trip, 1 Gbit/s each way; request deadline 121 s", dom)

    def test_mixed_traffic_and_a_soak_show_their_tables(self):
        data = sample_open_results(rates=(10,), repeated=1)
        unary = data["runs"][1]
        unary["per_minute"] = {
            "minute_s": 60.0,
            "sent": [600, 600],
            "ok": [600, 598],
            "p99_ms": [12.5, 13.0],
            "rss_mib": {"aggregator-service": [250.0, 251.0]},
            "heap_after_gc_mib": {"aggregator-service": [40.0, 47.0]},
        }
        data["settings"]["mix"] = ["rest/unary", "grpc/unary"]
        data["mix"] = {
            "paths": ["rest/unary", "grpc/unary"],
            "load": "open",
            "runs": [
                {
                    "n": 50,
                    "point": 10,
                    "seconds": 2,
                    "paths": [
                        {
                            "path": "rest/unary",
                            "seconds": 2,
                            "completed": 20,
                            "ok": 15,
                            "goodput": 7.5,
                            "p99_ms": 80.0,
                            "non200": 5,
                            "statuses": {"503": 4, "504": 1},
                            "transport_errors": {},
                            "alone": {"goodput": 10.0, "p99_ms": 40.0, "non200": {}, "answered": 20},
                        },
                        {
                            "path": "grpc/unary",
                            "seconds": 2,
                            "completed": 20,
                            "ok": 20,
                            "goodput": 10.0,
                            "p99_ms": 21.0,
                            "non200": 0,
                            "statuses": {},
                            "transport_errors": {},
                            "alone": {"goodput": 10.0, "p99_ms": 20.0, "non200": {}, "answered": 20},
                        },
                    ],
                }
            ],
        }

        dom = self.chromium(write_report(os.path.join(self.folder, "mix-soak"), data), "--dump-dom")

        self.assertIn('<section id="mix-section">', dom)
        self.assertIn(
            "rest/unary</td><td>50</td><td>10</td><td>7.50</td><td>10.00</td><td>75</td><td>80.000</td>"
            "<td>40.000</td><td>503 4, 504 1 (of 20)</td><td>0 (of 20)</td>",
            dom,
        )
        self.assertIn('<section id="soak-section">', dom)
        self.assertIn(
            "<td>heap after GC (MiB)</td><td>aggregator-service</td><td>2</td><td>40.000</td>"
            '<td>47.000</td><td>17.5</td><td class="below-goal">not flat</td>',
            dom,
        )
        self.assertIn("<td>2</td><td>600</td><td>9.97</td><td>13.000</td><td>251.0</td><td>47.0</td>", dom)

    def test_a_single_setting_report_draws_five_charts_and_a_card_per_path(self):
        page = write_report(os.path.join(self.folder, "single"), sample_results())

        dom = self.chromium(page, "--dump-dom")

        self.assertIn('data-charts-rendered="5"', dom)
        # The page opens with the verdict, right under its title.
        self.assertIn(
            '</h1>\n  <section class="failures" id="failures" hidden="">\n    <h2>This run did not finish as it '
            'should</h2>\n    <ul></ul>\n  </section>\n  <section class="verdict" id="verdict">\n'
            "    <h2>The answer</h2>\n    <ul "
            'id="verdict-sentences"><li>rest/unary serves 2.1 times grpc/unary\'s requests a second for '
            "51 % of its CPU per call.</li></ul>",
            dom,
        )
        # One payload shape on one network: neither section.
        self.assertIn('<section id="payload-section" hidden', dom)
        self.assertIn('<section id="network-section" hidden', dom)
        self.assertEqual(dom.count('class="card"'), 3)
        self.assertIn('<figure id="figure-call-time">', dom)
        # The server-side table, with the stream's server time marked as an upper bound.
        self.assertIn('<section id="server-side-section">', dom)
        self.assertIn("<td>200,000</td><td>≤ 300.0</td>", dom)

    def test_results_without_server_side_figures_still_draw_the_four_other_charts(self):
        data = sample_results()
        for run in data["runs"]:
            del run["server_side"]
        page = write_report(os.path.join(self.folder, "older"), data, older=True)

        dom = self.chromium(page, "--dump-dom")

        self.assertIn('data-charts-rendered="4"', dom)
        self.assertIn('<figure id="figure-call-time" hidden', dom)

    def test_a_floor_report_draws_the_fraction_of_floor_with_its_numbers(self):
        page = write_report(os.path.join(self.folder, "floor"), sample_with_floor())

        dom = self.chromium(page, "--dump-dom")

        self.assertIn('data-charts-rendered="6"', dom)
        self.assertIn('<section id="floor-section" style="--rows-height: 220px;">', dom)
        self.assertIn(
            "aggregator.in-flight 8, aggregator.rest.max-connections 64); each window warmed up for 1s (longer "
            "while a JVM's JIT still compiled), then measured 2s.",
            dom,
        )
        # Per path: downstream calls/s, its floor, the fraction and the goal; then the floor runs themselves.
        self.assertIn(
            '<td>71,689</td><td class="soft">rest_unary, 40 connections</td><td>136,571</td>'
            '<td class="below-goal">52.5 %</td><td class="below-goal">not met</td><td>19.5</td><td>8.1</td>'
            "<td>1.50 / 4.64</td>",
            dom,
        )
        self.assertIn("<td>grpc_stream</td><td>5 streams × 50 messages</td><td>70,597</td><td>5.76 s</td>", dom)
        self.assertEqual(dom.count("<dt>of its floor (goal 60 %)</dt>"), 3)
        # grpc/unary meets the goal; rest/unary and grpc/stream are marked below it, on their cards too.
        self.assertIn("<td>95.0 %</td><td>met</td>", dom)
        self.assertEqual(dom.count('<dd class="below-goal">'), 2)

    def test_a_path_below_the_goal_and_a_failed_floor_run_are_marked(self):
        data = sample_with_floor()
        data["runs"][0]["rps"] = 0.5 * 6828.561 * FLOOR_SCALE / 50
        records = data["floor"]["runs"]
        records[2] = {
            "transport": "grpc_stream",
            "window": records[2]["window"],
            "folder": records[2]["folder"],
            "error": "the grpc_stream client failed (exit status 1)",
        }
        floors.attach(data, records)
        page = write_report(os.path.join(self.folder, "floor-bad"), data)

        dom = self.chromium(page, "--dump-dom")

        self.assertIn('<td class="below-goal">50.0 %</td><td class="below-goal">not met</td>', dom)
        self.assertIn('<dd class="below-goal">50.0 %</dd>', dom)
        self.assertIn(
            "1 floor run(s) failed, so their paths have no fraction of floor: grpc_stream, 5 streams × 50 "
            "messages (the grpc_stream client failed (exit status 1))",
            dom,
        )
        self.assertIn('<td class="below-goal wrap" colspan="6">no floor: its floor run failed (below)</td>', dom)
        self.assertIn(
            '<tr class="bad" title="the grpc_stream client failed (exit status 1)"><td>grpc_stream</td>'
            '<td>5 streams × 50 messages</td><td class="wrap" colspan="9">error: the grpc_stream client '
            "failed (exit status 1)</td><td>floor/</td></tr>",
            dom,
        )
        self.assertIn('data-charts-rendered="6"', dom)

    def probe(self, page):
        """What the live charts of the page hold and drew, read back in the browser (PROBE) through the DOM."""
        probed = page.replace(".html", "-probed.html")
        with open(page) as source, open(probed, "w") as target:
            target.write(source.read().replace("</body>", "<script>" + PROBE + "</script></body>"))
        found = re.search(r'<pre id="probe">(.*?)</pre>', self.chromium(probed, "--dump-dom"), re.DOTALL)
        self.assertIsNotNone(found, "the probe did not run")
        return json.loads(html.unescape(found.group(1)))

    def test_the_floor_chart_draws_its_goal_as_a_dashed_red_line_with_its_label(self):
        charts = self.probe(write_report(os.path.join(self.folder, "floor-goal"), sample_with_floor()))

        self.assertIn("goal", charts["chart-floor-fraction"], "no goal annotation on the floor chart")
        goal = charts["chart-floor-fraction"]["goal"]
        self.assertEqual(
            goal["config"],
            {
                "type": "line",
                "scaleID": "x",
                "value": 60,
                "borderColor": "#c92a2a",
                "borderDash": [6, 4],
                "label": {"display": True, "content": "goal 60 %"},
            },
        )
        # Drawn: the goal's column of the canvas is red along the dashes, a column at 30 % is not.
        self.assertGreater(goal["red_pixels_at_goal"], 60, "no goal line on the floor chart")
        self.assertLess(goal["red_pixels_at_30_percent"], 5)

    def test_every_chart_draws_each_of_its_datasets_in_colour(self):
        charts = self.probe(write_report(os.path.join(self.folder, "colours"), sample_results()))

        self.assertEqual(
            {name: chart["datasets"] for name, chart in charts.items()},
            {
                "chart-throughput": 3,
                "chart-latency-curve": 3,
                "chart-cpu-per-request": 4,
                "chart-cpu-utilisation": 6,
                "chart-call-time": 2,
            },
        )
        for name, chart in charts.items():
            with self.subTest(chart=name):
                # The path and process colours are saturated; the page and the axes are greys and white.
                self.assertGreater(chart["coloured_pixels"], 500, "hardly any colour: the chart drew nothing")


# Appended to a copy of a report by BrowserRenderTests.probe: per chart, its datasets, its coloured pixels and, on
# the floor chart, the goal annotation's live config and the red pixels down its column.
PROBE = """
(function () {
  const isRed = (p, i) => Math.abs(p[i] - 201) < 16 && Math.abs(p[i + 1] - 42) < 16 && Math.abs(p[i + 2] - 42) < 16;
  const redDown = (canvas, x) => {
    const p = canvas.getContext('2d').getImageData(Math.round(x * devicePixelRatio), 0, 1, canvas.height).data;
    let red = 0;
    for (let i = 0; i < p.length; i += 4) red += isRed(p, i) ? 1 : 0;
    return red;
  };
  const charts = {};
  document.querySelectorAll('canvas').forEach((canvas) => {
    const chart = Chart.getChart(canvas);
    if (!chart) return;
    const p = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
    let coloured = 0;
    for (let i = 0; i < p.length; i += 4) {
      coloured += p[i + 3] > 0 && Math.max(p[i], p[i + 1], p[i + 2]) - Math.min(p[i], p[i + 1], p[i + 2]) > 60 ? 1 : 0;
    }
    let dark = 0;
    for (let i = 0; i < p.length; i += 4) dark += p[i + 3] > 200 && p[i] < 60 && p[i + 1] < 60 && p[i + 2] < 70 ? 1 : 0;
    const entry = { datasets: chart.data.datasets.length, coloured_pixels: coloured, dark_pixels: dark };
    const goal = ((chart.options.plugins.annotation || {}).annotations || {}).goal;
    if (goal) {
      entry.goal = {
        config: { type: goal.type, scaleID: goal.scaleID, value: goal.value, borderColor: goal.borderColor,
          borderDash: goal.borderDash, label: { display: goal.label.display, content: goal.label.content } },
        red_pixels_at_goal: Math.max(...[-1, 0, 1].map(
          (dx) => redDown(canvas, chart.scales.x.getPixelForValue(goal.value) + dx))),
        red_pixels_at_30_percent: redDown(canvas, chart.scales.x.getPixelForValue(30)),
      };
    }
    charts[canvas.id] = entry;
  });
  const probe = Object.assign(document.createElement('pre'), { id: 'probe', textContent: JSON.stringify(charts) });
  document.body.appendChild(probe);
}());
"""


if __name__ == "__main__":
    unittest.main()
