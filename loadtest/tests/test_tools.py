"""Every tool the lab finds or installs (lab.tools): the shared installer's failure, java, the Vegeta and Toxiproxy
builds when Go is missing, and the library modules whose change rebuilds the jars."""

import os
import re
import stat
import tempfile
import unittest
from unittest import mock

from lab.core.catalogue import AGGREGATOR, SQUARE_GRPC, SQUARE_REST
from lab.core.errors import LabError, ToolMissing
from lab.host import tools
from lab.stage import services


class InstallerTests(unittest.TestCase):
    def test_a_failed_installer_is_named_with_what_it_leaves_missing_and_its_last_lines(self):
        with self.assertRaises(ToolMissing) as raised:
            tools._install(
                ["sh", "-c", "echo first; echo '2026/11/26 10:00:00 go: no such module'; exit 3"],
                "go install x",
                "LOAD=open has no load generator",
            )

        self.assertEqual(
            str(raised.exception),
            "go install x failed (exit code 3), so LOAD=open has no load generator:\n  first\n  go: no such module",
        )

    def test_a_java_home_without_java_says_what_to_install(self):
        with tempfile.TemporaryDirectory() as empty, mock.patch.dict(os.environ, {"JAVA_HOME": empty}):
            with self.assertRaisesRegex(ToolMissing, "java is missing: install a JDK 17 or newer"):
                tools.java()


class VegetaTests(unittest.TestCase):
    def test_the_version_vegeta_reports(self):
        release = "Version: v12.13.0\nCommit: 0123abc\nRuntime: go1.26.8 linux/amd64\nDate: 2026-01-01T00:00:00Z\n"
        self.assertEqual(tools.version_of(release), "v12.13.0")
        # What a plain `go install` builds says: no version stamped in.
        self.assertEqual(tools.version_of("Version: \nCommit: \nRuntime: go1.26.8 linux/amd64\nDate: \n"), "")

    def test_a_binary_of_the_pinned_version_is_used_as_it_is(self):
        with tempfile.TemporaryDirectory() as tools_bin:
            binary = self._fake_vegeta(tools_bin, "v12.13.0")

            self.assertEqual(tools.ensure_vegeta(tools_bin, find_go=lambda: None, log=self.fail), binary)

    def test_without_a_finder_given_it_looks_for_go_itself(self):
        with tempfile.TemporaryDirectory() as tools_bin:
            self._fake_vegeta(tools_bin, "")
            with mock.patch.object(tools, "_FIND_GO", return_value=None) as finder:
                with self.assertRaises(LabError):
                    tools.ensure_vegeta(tools_bin, log=self.fail)

        finder.assert_called_once_with()

    def test_without_go_the_error_says_how_to_get_it_and_that_ab_needs_none(self):
        with tempfile.TemporaryDirectory() as tools_bin:
            self._fake_vegeta(tools_bin, "")

            with self.assertRaises(LabError) as caught:
                tools.ensure_vegeta(tools_bin, find_go=lambda: None, log=self.fail)

        message = str(caught.exception)
        for part in (
            "Go is needed for LOAD=open",
            "apt-get install -y golang",
            "https://go.dev/dl",
            "LOAD=closed (ab) needs no Go",
        ):
            self.assertIn(part, message)

    @staticmethod
    def _fake_vegeta(folder, version):
        binary = os.path.join(folder, "vegeta")
        with open(binary, "w") as handle:
            handle.write("#!/bin/sh\nprintf 'Version: %s\\nCommit: \\n'\n" % version)
        os.chmod(binary, os.stat(binary).st_mode | stat.S_IXUSR)
        return binary


class EnsureToxiproxyTests(unittest.TestCase):
    def test_without_go_the_error_says_what_needs_it_and_what_does_not(self):
        with tempfile.TemporaryDirectory() as tools_bin:
            with self.assertRaises(LabError) as raised:
                tools.ensure_toxiproxy(tools_bin=tools_bin, find_go=lambda: None, log=lambda _: None)
        message = str(raised.exception)
        self.assertIn("Go is needed for NETWORK=proxy|lan|wan", message)
        self.assertIn("NETWORK=loopback needs no Go", message)


class LibraryModulesTests(unittest.TestCase):
    def test_every_library_module_of_the_build_makes_the_jars_built_from_it_stale(self):
        # A library is every module of the root pom that the lab does not start or is not itself: a change in one
        # must rebuild the services, or the lab measures the jars of before.
        with open(os.path.join(tools.REPO, "pom.xml"), encoding="utf-8") as pom:
            modules = re.findall(r"<module>([^<]+)</module>", pom.read())
        started = {AGGREGATOR, SQUARE_REST, SQUARE_GRPC, services.FLOOR}
        # boot4 holds the other Spring generation's services, which stacks start from their own modules.
        libraries = [m for m in modules if m not in started and m not in ("loadtest", "monitoring", "boot4")]

        self.assertEqual(tools._libraries(tools.REPO), libraries)


class JcmdTests(unittest.TestCase):
    def test_the_jcmd_beside_the_java_a_link_points_to_is_the_jdks_own(self):
        with tempfile.TemporaryDirectory() as folder:
            jdk_bin = os.path.join(folder, "jdk", "bin")
            os.makedirs(jdk_bin)
            for name in ("java", "jcmd"):
                path = os.path.join(jdk_bin, name)
                with open(path, "w") as handle:
                    handle.write("#!/bin/sh\n")
                os.chmod(path, 0o755)
            link = os.path.join(folder, "java")
            os.symlink(os.path.join(jdk_bin, "java"), link)

            self.assertEqual(tools.jcmd(link, "to attach"), os.path.join(jdk_bin, "jcmd"))

    def test_without_a_jcmd_the_error_says_why_it_is_needed(self):
        with mock.patch.object(tools.shutil, "which", return_value=None):
            with self.assertRaisesRegex(ToolMissing, "jcmd is missing beside /x/java: to attach; install the full JDK"):
                tools.jcmd("/x/java", "to attach")


if __name__ == "__main__":
    unittest.main()
