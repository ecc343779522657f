"""The stacks a lab run measures: REST_SERVER, JAVA_HOMES and VIRTUAL_THREADS, read, checked and recorded."""

import copy
import os
import re
import shutil
import tempfile
import unittest

from lab.core import records
from lab.core.errors import SettingsError
from lab.core.settings import Settings
from lab.measure import bench
from lab.results import check_results, report, verdict, view
from lab.stage import stacks

from tests.support import report_texts, sample_results

JAVA = shutil.which("java") or "java"
JAVA_HOME = os.path.dirname(os.path.dirname(os.path.realpath(JAVA)))


class StackSettingsTests(unittest.TestCase):
    def test_netty_and_reactor_nettys_client_on_the_labs_own_java_without_virtual_threads_by_default(self):
        settings = Settings.from_env({})

        self.assertEqual(
            (settings.rest_server, settings.rest_client, settings.java_homes, settings.virtual_threads),
            (["netty"], ["reactor-netty"], [], False),
        )
        self.assertEqual(
            {key: settings.as_dict()[key] for key in ("rest_server", "java_homes", "virtual_threads")},
            {"rest_server": ["netty"], "java_homes": [], "virtual_threads": False},
        )

    def test_servers_in_the_order_given_each_once(self):
        self.assertEqual(
            Settings.from_env({"REST_SERVER": "jetty tomcat jetty netty"}).rest_server, ["jetty", "tomcat", "netty"]
        )

    def test_a_server_that_does_not_exist_names_the_knob_and_the_servers(self):
        with self.assertRaisesRegex(
            SettingsError, "unknown server 'undertow' in REST_SERVER; known servers: netty tomcat jetty"
        ):
            Settings.from_env({"REST_SERVER": "tomcat undertow"})

    def test_virtual_threads_are_on_or_off(self):
        self.assertTrue(Settings.from_env({"VIRTUAL_THREADS": "on"}).virtual_threads)
        with self.assertRaisesRegex(SettingsError, "VIRTUAL_THREADS must be one of off, on, got 'yes'"):
            Settings.from_env({"VIRTUAL_THREADS": "yes"})


class ResolveTests(unittest.TestCase):
    def test_the_first_server_measures_every_path_and_the_others_the_rest_paths(self):
        settings = Settings.from_env({"REST_SERVER": "tomcat jetty", "PATHS": "rest/unary grpc/unary rest/h2c"})

        found = stacks.resolve(settings, JAVA)

        self.assertEqual(
            [(stack.rest_server, stack.paths) for stack in found],
            [("tomcat", ("rest/unary", "grpc/unary", "rest/h2c")), ("jetty", ("rest/unary", "rest/h2c"))],
        )
        self.assertRegex(found[1].label, r"^jetty · reactor-netty client · JDK \d+$")
        self.assertEqual(found[1].arguments("square-rest-service"), ["--square.server=jetty"])
        self.assertEqual(
            found[1].arguments("aggregator-service"),
            ["--aggregator.rest.client=reactor-netty", "--aggregator.rest.h2c-client=reactor-netty"],
        )

    def test_each_client_measures_the_aggregators_rest_paths_and_the_jdks_only_http_1_1(self):
        settings = Settings.from_env(
            {
                "REST_SERVER": "tomcat netty",
                "REST_CLIENT": "reactor-netty jdk",
                "PATHS": "rest/unary rest/h2c rest/square grpc/stream",
            }
        )

        found = stacks.resolve(settings, JAVA)

        self.assertEqual(
            [(stack.rest_server, stack.rest_client, stack.paths) for stack in found],
            [
                ("tomcat", "reactor-netty", ("rest/unary", "rest/h2c", "rest/square", "grpc/stream")),
                ("tomcat", "jdk", ("rest/unary",)),
                ("netty", "reactor-netty", ("rest/unary", "rest/h2c", "rest/square")),
                ("netty", "jdk", ("rest/unary", "rest/square")),
            ],
        )
        self.assertEqual(found[1].arguments("aggregator-service"), ["--aggregator.rest.client=jdk"])

    def test_a_client_that_does_not_exist_names_the_knob_and_the_clients(self):
        with self.assertRaisesRegex(
            SettingsError,
            "unknown client 'okhttp' in REST_CLIENT; known clients: reactor-netty webclient jetty apache jdk",
        ):
            Settings.from_env({"REST_CLIENT": "okhttp"})

    def test_a_service_that_does_not_run_what_its_stack_asks_is_named(self):
        jdk = stacks.Jdk("", "java", "17.0.15")
        jetty = stacks.Stack("jetty", "apache", jdk, False, ("rest/unary",))

        self.assertEqual(stacks.not_running(jetty, "square-rest-service", {"square": {"server": "jetty"}}), [])
        self.assertEqual(
            stacks.not_running(jetty, "square-rest-service", {}),
            [
                "square-rest-service runs server=tomcat, not jetty as stack jetty · apache client · JDK 17 asks "
                "(GET /actuator/info, square.server)"
            ],
        )
        self.assertEqual(
            stacks.not_running(
                jetty,
                "aggregator-service",
                {"aggregator": {"rest-client": "apache", "rest-h2c-client": "reactor-netty"}},
            ),
            [
                "aggregator-service runs rest-h2c-client=reactor-netty, not apache as stack jetty · apache client · "
                "JDK 17 asks (GET /actuator/info, aggregator.rest-h2c-client)"
            ],
        )
        default = stacks.Stack("tomcat", "reactor-netty", jdk, False, ("rest/unary",))
        self.assertEqual(stacks.not_running(default, "aggregator-service", {"aggregator": {}}), [])

    def test_several_servers_without_a_rest_path_are_refused(self):
        with self.assertRaisesRegex(SettingsError, "REST_SERVER lists tomcat netty, but PATHS has no path it changes"):
            stacks.resolve(Settings.from_env({"REST_SERVER": "tomcat netty", "PATHS": "grpc/unary"}), JAVA)

    def test_a_folder_that_is_not_a_jdk_is_refused_before_anything_starts(self):
        with tempfile.TemporaryDirectory() as folder:
            with self.assertRaisesRegex(
                SettingsError, "JAVA_HOMES: %s is not a JDK \\(it has no executable bin/java\\)" % folder
            ):
                stacks.resolve(Settings.from_env({"JAVA_HOMES": folder}), JAVA)

    def test_a_jdk_folder_is_asked_for_its_version(self):
        found = stacks.resolve(Settings.from_env({"JAVA_HOMES": JAVA_HOME}), JAVA)

        self.assertEqual(found[0].jdk.java, os.path.join(JAVA_HOME, "bin", "java"))
        self.assertRegex(found[0].jdk.version, r"^\d+(\.\d+)*")
        self.assertEqual(found[0].as_dict()["java_home"], JAVA_HOME)

    def test_virtual_threads_need_jdk_21(self):
        settings = Settings.from_env({"VIRTUAL_THREADS": "on"})
        if stacks.probe("", JAVA).major >= stacks.VIRTUAL_THREADS_JDK:
            self.assertEqual(
                stacks.resolve(settings, JAVA)[0].arguments("square-grpc-service"),
                ["--spring.threads.virtual.enabled=true"],
            )
        else:
            with self.assertRaisesRegex(SettingsError, "VIRTUAL_THREADS=on needs JDK 21 or newer"):
                stacks.resolve(settings, JAVA)

    def test_labels_name_the_server_the_jdk_and_virtual_threads(self):
        jdk = stacks.Jdk("/opt/jdk-25", "/opt/jdk-25/bin/java", "25.0.1")

        self.assertEqual(stacks.Stack("netty", "jetty", jdk, False, ()).label, "netty · jetty client · JDK 25")
        self.assertEqual(
            stacks.Stack("tomcat", "reactor-netty", jdk, True, ()).label,
            "tomcat · reactor-netty client · JDK 25 · virtual threads",
        )
        self.assertEqual(stacks.Jdk("", "java", "1.8.0_402").major, 8)

    def test_each_spring_generation_measures_every_path_on_its_own_services(self):
        settings = Settings.from_env(
            {"SPRING": "3.5 4.1", "REST_SERVER": "netty tomcat", "PATHS": "rest/unary grpc/unary"}
        )

        found = stacks.resolve(settings, JAVA)

        self.assertEqual(
            [(stack.spring, stack.rest_server, stack.paths) for stack in found],
            [
                ("3.5", "netty", ("rest/unary", "grpc/unary")),
                ("3.5", "tomcat", ("rest/unary",)),
                ("4.1", "netty", ("rest/unary", "grpc/unary")),
                ("4.1", "tomcat", ("rest/unary",)),
            ],
        )
        self.assertEqual(found[0].label, "netty · reactor-netty client · JDK %d" % found[0].jdk.major)
        self.assertEqual(found[2].label, found[0].label + " · Boot 4.1")
        self.assertEqual(
            (found[0].module("aggregator-service"), found[2].module("aggregator-service")),
            ("aggregator-service", "boot4/aggregator-service"),
        )
        self.assertEqual(found[2].as_dict()["spring"], "4.1")

    def test_a_spring_generation_that_does_not_exist_names_the_knob_and_the_generations(self):
        with self.assertRaisesRegex(
            SettingsError, "unknown Spring generation '3.4' in SPRING; known Spring generations: 3.5 4.1"
        ):
            Settings.from_env({"SPRING": "3.4"})

    def test_boot_41_services_get_the_grpc_servers_settings_in_spring_grpcs_words(self):
        jdk = stacks.Jdk("", "java", "17.0.9")
        arguments = [
            "--grpc.server.port=6565",
            "--grpc.server.address=127.0.0.1",
            "--grpc.server.security.enabled=true",
            "--grpc.server.security.certificate-chain=file:/tmp/tls/server.crt",
            "--grpc.server.security.private-key=file:/tmp/tls/server.key",
            "--grpc.server.security.client-auth=REQUIRE",
            "--grpc.server.security.trust-cert-collection=file:/tmp/tls/ca.crt",
            "--server.port=7575",
        ]

        self.assertEqual(stacks.Stack("netty", "jetty", jdk, False, ()).adapted(arguments), arguments)
        self.assertEqual(
            stacks.Stack("netty", "jetty", jdk, False, (), spring="4.1").adapted(arguments),
            [
                "--spring.grpc.server.port=6565",
                "--spring.grpc.server.address=127.0.0.1",
                "--spring.grpc.server.ssl.bundle=grpc",
                "--spring.ssl.bundle.pem.grpc.keystore.certificate=/tmp/tls/server.crt",
                "--spring.ssl.bundle.pem.grpc.keystore.private-key=/tmp/tls/server.key",
                "--spring.grpc.server.ssl.client-auth=require",
                "--spring.ssl.bundle.pem.grpc.truststore.certificate=/tmp/tls/ca.crt",
                "--server.port=7575",
            ],
        )

    def test_a_stack_other_than_the_first_names_its_raw_files_and_logs(self):
        jdk = stacks.Jdk("", "java", "25.0.1")
        stack = stacks.Stack("jetty", "reactor-netty", jdk, True, ())

        self.assertEqual(stack.slug, "jetty-reactor-netty-client-jdk-25-virtual-threads")
        self.assertEqual(
            bench.run_slug("rest/unary", 1000, 100, conditions=bench.Conditions(stack=stack.slug)),
            "rest-unary_jetty-reactor-netty-client-jdk-25-virtual-threads_n1000_c100",
        )
        self.assertEqual(
            bench.run_slug("rest/unary", 1000, 100, conditions=bench.Conditions()), "rest-unary_n1000_c100"
        )


def two_stacks():
    """sample_results() on tomcat, and its rest/unary again on jetty: 1.5 times the req/s for 0.8 of the CPU."""
    data = sample_results()
    tomcat = {
        "label": "tomcat · JDK 17",
        "rest_server": "tomcat",
        "java_home": None,
        "java": "java",
        "jdk_version": "17.0.15",
        "virtual_threads": False,
        "paths": list(data["settings"]["paths"]),
    }
    jetty = dict(tomcat, label="jetty · JDK 17", rest_server="jetty", paths=["rest/unary"])
    data["settings"]["stacks"] = [tomcat, jetty]
    for run in data["runs"]:
        run["stack"] = tomcat["label"]
    faster = copy.deepcopy(data["runs"][0])
    faster.update(stack=jetty["label"], rps=round(faster["rps"] * 1.5, 2))
    for usage in faster["cpu"].values():
        if isinstance(usage, dict) and usage.get("us_per_call"):
            usage["us_per_call"] = usage["us_per_call"] * 0.8
    data["runs"].append(faster)
    return data


class StackResultsTests(unittest.TestCase):
    def test_a_run_is_told_apart_by_its_stack(self):
        data = two_stacks()

        self.assertEqual(len({records.key(run) for run in data["runs"]}), len(data["runs"]))
        self.assertEqual(records.run_name(data["runs"][-1]), "rest/unary n=1000 c=100 on jetty · JDK 17")
        self.assertEqual(records.listed(data["settings"], "stack"), ["tomcat · JDK 17", "jetty · JDK 17"])
        self.assertEqual(records.listed(sample_results()["settings"], "stack"), [""])

    def test_the_side_by_side_table_compares_each_stack_with_the_first_on_the_same_path(self):
        data = two_stacks()

        table = view.comparisons_table(data["runs"], view.conditions_shown(data["settings"]))

        rows = [row["cells"] for row in table["rows"] if "against tomcat" in row["cells"][0]]
        self.assertEqual(
            rows,
            [
                [
                    "rest/unary: jetty · JDK 17 against tomcat · JDK 17",
                    "jetty · JDK 17 ÷ tomcat · JDK 17",
                    "jetty · JDK 17",
                    "1000",
                    "100",
                    "1.50×",
                    "0.80×",
                ]
            ],
        )
        self.assertIn("stack", table["heads"])

    def test_the_check_wants_each_stacks_paths_and_no_more(self):
        data = two_stacks()
        self.assertEqual([p for p in check_results.problems(data) if "no run" in p], [])

        data["runs"].pop()

        self.assertIn(
            "no run for path rest/unary n=1000 concurrency=100 on jetty · JDK 17", check_results.problems(data)
        )

    def test_the_report_names_the_stacks(self):
        shown = view.view(two_stacks())

        self.assertIn(
            "stacks tomcat · JDK 17, jetty · JDK 17",
            report_texts(two_stacks(), '<p class="subtitle" id="subtitle">')[0],
        )
        # The report's settings list each stack (report/template.html).
        self.assertEqual(
            re.findall(r"<dt>(stack [^<]*)</dt>", report.render(two_stacks(), "", "")),
            ["stack tomcat · JDK 17", "stack jetty · JDK 17"],
        )
        self.assertEqual(len(shown["cards"]), 3)

    def test_the_verdict_compares_two_spring_generations_path_by_path_by_their_names(self):
        data = two_stacks()
        boot35, boot41 = data["settings"]["stacks"]
        boot35.update(label="tomcat · JDK 17", spring="3.5")
        boot41.update(label="tomcat · JDK 17 · Boot 4.1", rest_server="tomcat", spring="4.1")
        data["runs"][-1]["stack"] = boot41["label"]

        self.assertIn(
            "rest/unary on Boot 4.1 serves 1.50 times rest/unary on Boot 3.5's requests a second for 80 % of its CPU"
            " per call.",
            verdict.sentences(data),
        )


if __name__ == "__main__":
    unittest.main()
