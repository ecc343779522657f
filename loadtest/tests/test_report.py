"""report.html: self-contained, and really drawn by a real browser (headless Chromium).

Without Chromium the browser tests are skipped with a message, except under CI=true, where they fail:
CI must prove that the report renders.
"""

import os
import re
import shutil
import subprocess
import tempfile
import unittest

from lab import floor, report, results
from tests import png
from tests.support import sample_results, sample_with_floor

IN_CI = os.environ.get("CI", "").lower() == "true"
BROWSER_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--hide-scrollbars", "--virtual-time-budget=10000"]


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


def write_report(folder, data):
    os.makedirs(folder, exist_ok=True)
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
            report.ensure_scripts()
        except report.ReportError as error:
            unavailable(self, str(error))

    def chromium(self, page, *args):
        profile = tempfile.mkdtemp(prefix="profile-", dir=self.folder)
        done = subprocess.run([self.browser, *BROWSER_FLAGS, "--user-data-dir=" + profile, *args, "file://" + page],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120, cwd=self.folder)
        self.assertEqual(done.returncode, 0, done.stderr[-2000:])
        return done.stdout

    def test_a_sweep_report_draws_all_seven_charts(self):
        page = write_report(os.path.join(self.folder, "sweep"), sample_results(concurrency=(1, 8), n_values=(10, 100)))

        dom = self.chromium(page, "--dump-dom")

        self.assertIn('data-charts-rendered="7"', dom)
        self.assertIn("Against concurrency (sweep)", dom)
        self.assertNotIn('<section id="sweep" hidden', dom)

    def test_a_single_setting_report_draws_five_charts_and_a_card_per_path(self):
        page = write_report(os.path.join(self.folder, "single"), sample_results())

        dom = self.chromium(page, "--dump-dom")

        self.assertIn('data-charts-rendered="5"', dom)
        self.assertEqual(dom.count('class="card"'), 3)
        self.assertIn('<figure id="figure-call-time">', dom)
        # The server-side table, with the stream's server time marked as an upper bound.
        self.assertIn('<section id="server-side-section">', dom)
        self.assertIn("<td>200,000</td><td>≤ 300.0</td>", dom)

    def test_results_without_server_side_figures_still_draw_the_four_other_charts(self):
        data = sample_results()
        for run in data["runs"]:
            del run["server_side"]
        page = write_report(os.path.join(self.folder, "older"), data)

        dom = self.chromium(page, "--dump-dom")

        self.assertIn('data-charts-rendered="4"', dom)
        self.assertIn('<figure id="figure-call-time" hidden', dom)

    def test_a_floor_report_draws_the_fraction_of_floor_with_its_numbers(self):
        page = write_report(os.path.join(self.folder, "floor"), sample_with_floor())

        dom = self.chromium(page, "--dump-dom")

        self.assertIn('data-charts-rendered="6"', dom)
        self.assertIn('<section id="floor-section" style="--rows-height: 220px;">', dom)
        self.assertIn("aggregator.in-flight 8, aggregator.rest.max-connections 64); each floor run warmed up for 1s, "
                      "then measured 2s.", dom)
        # Per path: downstream calls/s, its floor, the fraction and the goal; then the floor runs themselves.
        self.assertIn('<td>71,689</td><td class="soft">rest_unary, 40 connections</td><td>6,829</td><td>1,049.8 %</td><td>met</td>'
                      '<td>19.5</td><td>161.0</td><td>1.50 / 4.64</td>', dom)
        self.assertIn("<td>grpc_stream</td><td>5 streams × 50 messages</td><td>3,530</td><td>5.76 s</td>", dom)
        self.assertEqual(dom.count("<dt>of its floor (goal 60 %)</dt>"), 3)
        self.assertNotIn('class="below-goal"', dom)

    def test_a_path_below_the_goal_and_a_failed_floor_run_are_marked(self):
        data = sample_with_floor()
        data["runs"][0]["rps"] = 0.5 * 6828.561 / 50
        records = data["floor"]["runs"]
        records[2] = {"transport": "grpc_stream", "window": records[2]["window"], "folder": records[2]["folder"],
                      "error": "the grpc_stream client failed (exit status 1)"}
        floor.attach(data, records)
        page = write_report(os.path.join(self.folder, "floor-bad"), data)

        dom = self.chromium(page, "--dump-dom")

        self.assertIn('<td class="below-goal">50.0 %</td><td class="below-goal">not met</td>', dom)
        self.assertIn('<dd class="below-goal">50.0 %</dd>', dom)
        self.assertIn("1 floor run(s) failed, so their paths have no fraction of floor: grpc_stream, 5 streams × 50 "
                      "messages (the grpc_stream client failed (exit status 1))", dom)
        self.assertIn('<td class="below-goal wrap" colspan="6">no floor: its floor run failed (below)</td>', dom)
        self.assertIn('<tr class="bad" title="the grpc_stream client failed (exit status 1)"><td>grpc_stream</td>'
                      '<td>5 streams × 50 messages</td><td class="wrap" colspan="8">error: the grpc_stream client failed '
                      '(exit status 1)</td><td>floor/grpc_stream_s5_m50/</td></tr>', dom)
        self.assertIn('data-charts-rendered="6"', dom)

    def test_the_floor_chart_draws_its_goal_as_a_line_across_the_bars(self):
        page = write_report(os.path.join(self.folder, "floor-shot"), sample_with_floor())
        shot = os.path.join(self.folder, "floor-shot.png")

        self.chromium(page, "--window-size=1280,3600", "--screenshot=" + shot)

        with open(shot, "rb") as handle:
            width, _, rows, pixel = png.decode(handle.read())
        # The goal's red (#c92a2a), the only red on a page where every path met its goal: a dashed vertical line
        # is a column with far more of it than any text has.
        red = [0] * width
        for row in rows:
            for x in range(width):
                r, g, b = row[x * pixel:x * pixel + 3]
                red[x] += abs(r - 201) < 30 and g < 90 and b < 90
        self.assertGreater(max(red), 60, "no goal line on the floor chart")

    def test_the_screenshot_shows_charts_not_a_blank_page(self):
        page = write_report(os.path.join(self.folder, "shot"), sample_results())
        shot = os.path.join(self.folder, "shot.png")

        self.chromium(page, "--window-size=1280,1600", "--screenshot=" + shot)

        with open(shot, "rb") as handle:
            width, height, rows, pixel = png.decode(handle.read())
        self.assertEqual((width, height), (1280, 1600))
        colours, coloured = set(), 0
        for row in rows[::4]:
            for x in range(0, len(row), pixel * 4):
                red, green, blue = row[x:x + 3]
                colours.add((red, green, blue))
                # The path colours are saturated; the page itself is greys and white.
                coloured += max(red, green, blue) - min(red, green, blue) > 60
        self.assertGreater(len(colours), 50, "too few colours: a blank or unstyled page")
        self.assertGreater(coloured, 500, "hardly any coloured pixels: the charts did not draw")


if __name__ == "__main__":
    unittest.main()
