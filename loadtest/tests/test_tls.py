"""TLS between the aggregator and the square services (TLS): the knob, the stacks it adds, the certificates the lab
makes and deletes, the services' arguments, and a real handshake read back."""

import copy
import os
import shutil
import socket
import ssl
import stat
import threading
import unittest

from lab.core.catalogue import AGGREGATOR, SQUARE_GRPC, SQUARE_REST
from lab.core.errors import SettingsError
from lab.core.settings import Settings
from lab.results import check_results, report, view
from lab.stage import services, stacks, tls

from tests.support import sample_results

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
JAVA = shutil.which("java") or "java"


class TlsSettingsTests(unittest.TestCase):
    def test_plaintext_by_default_and_modes_in_the_order_given(self):
        self.assertEqual(Settings.from_env({}).tls, ["off"])
        self.assertEqual(Settings.from_env({"TLS": "off mtls on mtls"}).tls, ["off", "mtls", "on"])
        self.assertEqual(Settings.from_env({"TLS": "mtls"}).tls, ["mtls"])

    def test_a_list_starts_with_plaintext_which_the_other_modes_are_compared_with(self):
        with self.assertRaisesRegex(SettingsError, 'a list starts with off: TLS="off mtls on"'):
            Settings.from_env({"TLS": "mtls off on"})

    def test_tls_alone_has_a_floor_of_its_own_the_bare_transports_encrypt_too(self):
        self.assertTrue(Settings.from_env({"TLS": "on"}).floor)
        self.assertTrue(Settings.from_env({"TLS": "off on"}).floor)
        self.assertEqual(Settings.from_env({"TLS": "off mtls"}).as_dict()["tls"], ["off", "mtls"])

    def test_openssl_by_default_or_the_jdks_engine(self):
        self.assertEqual(Settings.from_env({}).tls_provider, "openssl")
        self.assertEqual(Settings.from_env({"TLS_PROVIDER": "jdk"}).as_dict()["tls_provider"], "jdk")
        with self.assertRaisesRegex(SettingsError, "TLS_PROVIDER must be one of openssl, jdk, got 'boringssl'"):
            Settings.from_env({"TLS_PROVIDER": "boringssl"})

    def test_jdk_turns_nettys_openssl_off_in_each_service_under_tls_only(self):
        self.assertEqual(tls.jvm_options("mtls", "jdk", AGGREGATOR), ["-Dio.netty.handler.ssl.noOpenSsl=true"])
        self.assertEqual(tls.jvm_options("on", "jdk", SQUARE_REST), ["-Dio.netty.handler.ssl.noOpenSsl=true"])
        # grpc-netty-shaded's Netty reads its switch under the shaded name.
        self.assertEqual(
            tls.jvm_options("on", "jdk", SQUARE_GRPC),
            ["-Dio.grpc.netty.shaded.io.netty.handler.ssl.noOpenSsl=true", "-Dio.netty.handler.ssl.noOpenSsl=true"],
        )
        self.assertEqual(tls.jvm_options("on", "openssl", SQUARE_GRPC), [])
        self.assertEqual(tls.jvm_options("off", "jdk", AGGREGATOR), [])

    def test_an_unknown_mode_names_the_knob_and_the_modes(self):
        with self.assertRaisesRegex(SettingsError, "unknown TLS mode 'ssl' in TLS; known TLS modes: off on mtls"):
            Settings.from_env({"TLS": "off ssl"})

    def test_rest_square_is_plaintext_only_so_tls_first_refuses_it(self):
        with self.assertRaisesRegex(SettingsError, 'rest/square .* put off first in TLS \\(TLS="off mtls"\\)'):
            Settings.from_env({"TLS": "mtls", "PATHS": "rest/unary rest/square"})

    def test_tls_needs_a_path_through_the_aggregator(self):
        with self.assertRaisesRegex(SettingsError, "TLS lists off mtls, but PATHS has no path it changes"):
            stacks.resolve(Settings.from_env({"TLS": "off mtls", "PATHS": "rest/square"}), JAVA)


class TlsStacksTests(unittest.TestCase):
    def test_each_mode_after_the_first_measures_the_paths_through_the_aggregator_again(self):
        settings = Settings.from_env({"TLS": "off mtls", "PATHS": "rest/unary grpc/stream rest/square"})

        found = stacks.resolve(settings, JAVA)

        self.assertEqual(
            [(stack.tls, stack.paths) for stack in found],
            [("off", ("rest/unary", "grpc/stream", "rest/square")), ("mtls", ("rest/unary", "grpc/stream"))],
        )
        self.assertRegex(found[0].label, r"^netty · reactor-netty client · JDK \d+$")
        self.assertRegex(found[1].label, r"^netty · reactor-netty client · JDK \d+ · mTLS$")
        self.assertEqual(found[1].as_dict()["tls"], "mtls")

    def test_modes_multiply_the_other_stacks(self):
        settings = Settings.from_env({"TLS": "off on", "REST_SERVER": "netty tomcat", "PATHS": "rest/unary grpc/unary"})

        found = stacks.resolve(settings, JAVA)

        self.assertEqual(
            [(stack.rest_server, stack.tls, stack.paths) for stack in found],
            [
                ("netty", "off", ("rest/unary", "grpc/unary")),
                ("tomcat", "off", ("rest/unary",)),
                ("netty", "on", ("rest/unary", "grpc/unary")),
                ("tomcat", "on", ("rest/unary",)),
            ],
        )

    def test_a_square_service_in_another_mode_than_its_stack_is_named(self):
        stack = stacks.resolve(Settings.from_env({"TLS": "mtls"}), JAVA)[0]

        self.assertEqual(
            stacks.not_running(stack, SQUARE_GRPC, {"tls": {"mode": "on", "provider": "OpenSSL (BoringSSL)"}}),
            [
                "square-grpc-service runs tls mode on, not mtls as stack %s asks (GET /actuator/info, tls.mode)"
                % stack.label
            ],
        )
        self.assertEqual(stacks.not_running(stack, SQUARE_GRPC, {"tls": {"mode": "mtls"}}), [])
        self.assertEqual(len(stacks.not_running(stack, SQUARE_REST, {"square": {"server": "netty"}})), 1)

    def test_an_aggregator_in_another_mode_than_its_stack_is_named(self):
        stack = stacks.resolve(Settings.from_env({"TLS": "mtls"}), JAVA)[0]
        info = {
            "aggregator": {"rest-client": "reactor-netty", "rest-h2c-client": "reactor-netty", "tls": {"mode": "on"}}
        }

        self.assertEqual(
            stacks.not_running(stack, AGGREGATOR, info),
            [
                "aggregator-service runs tls mode on, not mtls as stack %s asks (GET /actuator/info, "
                "aggregator.tls.mode)" % stack.label
            ],
        )
        plaintext = {"aggregator": {"rest-client": "reactor-netty", "rest-h2c-client": "reactor-netty"}}
        self.assertEqual(len(stacks.not_running(stack, AGGREGATOR, plaintext)), 1)
        self.assertEqual(stacks.not_running(stacks.resolve(Settings.from_env({}), JAVA)[0], AGGREGATOR, plaintext), [])


class TlsServicesTests(unittest.TestCase):
    settings = Settings.from_env({"REPLICAS": "2", "TLS": "off mtls"})

    def test_the_rest_square_service_serves_tls_on_its_own_port_and_keeps_its_actuator_in_plaintext(self):
        plain = services.layout(self.settings, [SQUARE_REST])[1]

        secured = services.on_tls(self.settings, plain, "mtls")

        self.assertEqual((secured.serving_port, secured.http_port, secured.base_url), (7444, 7576, None))
        self.assertEqual(secured.ports, {"SQUARE_REST_PORT+1": 7576, "SQUARE_REST_TLS_PORT+1": 7444})
        self.assertEqual(
            secured.arguments,
            [
                "--server.address=127.0.0.1",
                "--server.port=7444",
                "--management.server.address=127.0.0.1",
                "--management.server.port=7576",
                "--management.server.ssl.enabled=false",
            ],
        )
        self.assertIs(services.on_tls(self.settings, plain, "off"), plain)

    def test_the_grpc_service_serves_tls_where_it_served_plaintext(self):
        plain = services.layout(self.settings, [SQUARE_GRPC])[0]

        self.assertIs(services.on_tls(self.settings, plain, "on"), plain)

    def test_the_aggregator_calls_https_under_tls(self):
        squares = [
            services.on_tls(self.settings, instance, "on")
            for instance in services.layout(self.settings, [SQUARE_REST, SQUARE_GRPC])
        ]

        aggregator = services.aggregator(self.settings, squares, tls="on")

        self.assertIn("--aggregator.rest.base-url=https://127.0.0.1:7443,https://127.0.0.1:7444", aggregator.arguments)
        self.assertIn("--aggregator.grpc.target=127.0.0.1:6565,127.0.0.1:6567", aggregator.arguments)

    def test_arguments_per_mode_name_the_certificates_and_require_a_client_one_under_mtls(self):
        found = tls.Certificates("/run/lab")

        self.assertEqual(tls.arguments("off", SQUARE_REST, None), [])
        self.assertEqual(
            tls.arguments("mtls", SQUARE_REST, found),
            [
                "--server.ssl.bundle=lab",
                "--spring.ssl.bundle.pem.lab.keystore.certificate=/run/lab/server.pem",
                "--spring.ssl.bundle.pem.lab.keystore.private-key=/run/lab/server.key",
                "--server.ssl.client-auth=need",
                "--spring.ssl.bundle.pem.lab.truststore.certificate=/run/lab/ca.pem",
            ],
        )
        self.assertEqual(
            tls.arguments("on", SQUARE_GRPC, found),
            [
                "--grpc.server.security.enabled=true",
                "--grpc.server.security.certificate-chain=file:/run/lab/server.pem",
                "--grpc.server.security.private-key=file:/run/lab/server.key",
            ],
        )
        self.assertEqual(
            tls.arguments("mtls", AGGREGATOR, found),
            [
                "--aggregator.tls.bundle=lab",
                "--spring.ssl.bundle.pem.lab.truststore.certificate=/run/lab/ca.pem",
                "--spring.ssl.bundle.pem.lab.keystore.certificate=/run/lab/client.pem",
                "--spring.ssl.bundle.pem.lab.keystore.private-key=/run/lab/client.key",
            ],
        )


@unittest.skipUnless(shutil.which("openssl"), "needs openssl")
class CertificatesTests(unittest.TestCase):
    def test_keys_are_the_owners_only_and_the_folder_is_gone_after_the_run(self):
        with tls.certificates(REPO, True) as found:
            assert found is not None
            folder = found.folder
            names = sorted(os.listdir(folder))
            modes = {name: stat.S_IMODE(os.stat(found.path(name)).st_mode) for name in names}

        self.assertEqual(names, ["ca.pem", "client.key", "client.pem", "server.key", "server.pem"])
        self.assertEqual((modes["server.key"], modes["client.key"]), (0o600, 0o600))
        self.assertFalse(os.path.exists(folder))

    def test_a_run_without_tls_makes_none(self):
        with tls.certificates(REPO, False) as found:
            self.assertIsNone(found)

    def test_a_real_mutual_handshake_reads_back_protocol_cipher_and_alpn(self):
        with tls.certificates(REPO, True) as found:
            assert found is not None
            server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            server.load_cert_chain(found.path("server.pem"), found.path("server.key"))
            server.load_verify_locations(found.path("ca.pem"))
            server.verify_mode = ssl.CERT_REQUIRED
            server.set_alpn_protocols(["h2", "http/1.1"])
            listener = socket.create_server(("127.0.0.1", 0))
            port = listener.getsockname()[1]

            def serve():
                connection, _ = listener.accept()
                try:
                    with server.wrap_socket(connection, server_side=True):
                        pass
                except (OSError, ssl.SSLError):
                    pass

            thread = threading.Thread(target=serve)
            thread.start()
            try:
                record = tls.negotiated("mtls", "rest-h2c", port, found)
            finally:
                thread.join(10)
                listener.close()

        self.assertEqual(
            {key: record.get(key) for key in ("protocol", "alpn")}, {"protocol": "TLSv1.3", "alpn": "h2"}, record
        )
        self.assertTrue(record["cipher"].startswith("TLS_"), record)

    def test_a_port_that_does_not_speak_tls_gives_an_error_not_an_exception(self):
        listener = socket.create_server(("127.0.0.1", 0))
        port = listener.getsockname()[1]

        def answer_in_plaintext():
            connection, _ = listener.accept()
            with connection:
                connection.recv(1024)
                connection.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")

        thread = threading.Thread(target=answer_in_plaintext)
        thread.start()
        try:
            with tls.certificates(REPO, True) as found:
                record = tls.negotiated("on", "grpc", port, found)
        finally:
            thread.join(10)
            listener.close()

        self.assertRegex(
            record["error"], "^no handshake with 127.0.0.1:%d: .*(WRONG_VERSION_NUMBER|record layer)" % port
        )


def with_mtls():
    """sample_results() in plaintext, and its rest/unary and grpc/unary again under mTLS: 0.6 times the req/s for 1.5
    times the CPU per call."""
    data = sample_results()
    plain = {
        "label": "netty · reactor-netty client · JDK 17",
        "rest_server": "netty",
        "rest_client": "reactor-netty",
        "java_home": None,
        "java": "java",
        "jdk_version": "17.0.15",
        "virtual_threads": False,
        "tls": "off",
        "paths": list(data["settings"]["paths"]),
    }
    jdk, boring = "JDK (SunJSSE)", "OpenSSL (BoringSSL)"
    mutual = dict(
        plain,
        label=plain["label"] + " · mTLS",
        tls="mtls",
        paths=["rest/unary", "grpc/unary"],
        tls_details={
            "mode": "mtls",
            "squares": {
                "rest": {
                    "protocol": "TLSv1.3",
                    "cipher": "TLS_AES_128_GCM_SHA256",
                    "alpn": "http/1.1",
                    "mode": "mtls",
                    "provider": jdk,
                },
                "grpc": {
                    "protocol": "TLSv1.3",
                    "cipher": "TLS_AES_256_GCM_SHA384",
                    "alpn": "h2",
                    "mode": "mtls",
                    "provider": boring,
                },
            },
            "aggregator": {"mode": "mtls", "bundle": "lab", "providers": {"rest": jdk, "rest-h2c": jdk, "grpc": jdk}},
        },
    )
    data["settings"]["stacks"] = [plain, mutual]
    for run in data["runs"]:
        run["stack"] = plain["label"]
    for run in [r for r in data["runs"] if r["path"] in mutual["paths"]]:
        slower = copy.deepcopy(run)
        slower.update(stack=mutual["label"], rps=round(run["rps"] * 0.6, 2))
        slower["bytes_per_call"] = dict(slower.get("bytes_per_call") or {}, connections_opened=3)
        for usage in slower["cpu"].values():
            if isinstance(usage, dict) and usage.get("us_per_call"):
                usage["us_per_call"] = usage["us_per_call"] * 1.5
        data["runs"].append(slower)
    return data


class TlsReportTests(unittest.TestCase):
    def test_each_tls_run_stands_beside_the_same_path_in_plaintext(self):
        data = with_mtls()

        table = view.view(data)["tables"]["tls"]

        self.assertEqual(
            table["heads"][:2] + table["heads"][-3:],
            ["path", "TLS", "handshakes, all repeats (at least)", "providers", "negotiated (protocol · cipher · ALPN)"],
        )
        rows = {row["cells"][0]: row["cells"] for row in table["rows"]}
        self.assertEqual(sorted(rows), ["grpc/unary", "rest/unary"])
        rest = rows["rest/unary"]
        self.assertEqual(rest[1], "mTLS")
        self.assertEqual((rest[5], rest[7], rest[8]), ("0.60×", "1.50×", "3"))
        self.assertEqual(rest[9], "aggregator JDK (SunJSSE) · square JDK (SunJSSE)")
        self.assertEqual(rest[10], "TLSv1.3 · TLS_AES_128_GCM_SHA256 · http/1.1")
        self.assertEqual(rows["grpc/unary"][9], "aggregator JDK (SunJSSE) · square OpenSSL (BoringSSL)")

    def test_the_side_by_side_table_says_mtls_against_plaintext_not_against_the_first_stack(self):
        data = with_mtls()

        table = view.view(data)["tables"]["comparisons"]

        whats = [row["cells"][0] for row in table["rows"]]
        self.assertIn("rest/unary: mTLS against plaintext", whats)
        self.assertIn("grpc/unary: mTLS against plaintext", whats)
        self.assertFalse([what for what in whats if "against netty" in what], whats)
        row = next(row["cells"] for row in table["rows"] if row["cells"][0] == "rest/unary: mTLS against plaintext")
        self.assertEqual(row[-2:], ["0.60×", "1.50×"])

    def test_the_chart_has_cpu_per_call_per_path_in_each_mode(self):
        data = with_mtls()
        plain = {run["path"]: run for run in data["runs"] if run["stack"].endswith("JDK 17")}

        chart = view.view(data)["tls"]

        self.assertEqual([mode["label"] for mode in chart["modes"]], ["plaintext", "mTLS"])
        rest = chart["paths"].index("rest/unary")
        stream = chart["paths"].index("grpc/stream")
        self.assertAlmostEqual(chart["modes"][1]["values"][rest], 1.5 * chart["modes"][0]["values"][rest], delta=0.2)
        self.assertIsNone(chart["modes"][1]["values"][stream])
        self.assertIsNotNone(chart["modes"][0]["values"][stream], plain)

    def test_the_verdict_sets_each_path_under_tls_against_itself_in_plaintext(self):
        said = view.view(with_mtls())["verdict"]

        self.assertIn(
            "rest/unary in plaintext serves 1.67 times rest/unary under mTLS's requests a second for 67 % of its CPU "
            "per call.",
            said,
        )
        self.assertFalse([sentence for sentence in said if "stacks" in sentence or " on netty" in sentence], said)

    def test_the_floor_in_each_mode_stands_beside_the_floor_in_plaintext(self):
        data = with_mtls()
        plain = {"transport": "grpc_unary", "window": {"in_flight": 8}, "calls": 1000, "calls_per_second": 100.0}
        plain.update(folder="floor/grpc_unary_i8", latency_us={"p50": 1, "p90": 2, "p99": 3, "max": 4})
        plain.update(client_cpu_seconds=0.010, server_cpu_seconds=0.010)
        said = {"mode": "mtls", "client_provider": "JDK (SunJSSE)", "server_provider": "OpenSSL (BoringSSL)"}
        said.update(protocol="TLSv1.3", cipher="TLS_AES_256_GCM_SHA384", alpn="h2")
        encrypted = dict(plain, window={"in_flight": 8, "tls": "mtls"}, calls_per_second=80.0, tls=said)
        encrypted.update(client_cpu_seconds=0.015, server_cpu_seconds=0.015)
        data["floor"] = {"goal": 0.6, "aggregator": None, "runs": [plain, encrypted]}

        table = view.view(data)["tables"]["tls_floor"]

        self.assertEqual(
            [row["cells"] for row in table["rows"]],
            [
                [
                    "grpc_unary",
                    "mTLS",
                    "8 calls in flight",
                    "100 → 80",
                    "0.80×",
                    "20.0 → 30.0 µs",
                    "1.50×",
                    "client JDK (SunJSSE) · server OpenSSL (BoringSSL)",
                    "TLSv1.3 · TLS_AES_256_GCM_SHA384 · h2",
                ]
            ],
        )
        self.assertIn('id="tls-floor-table"', report.render(data, "", ""))
        self.assertIsNone(view.view(with_mtls())["tables"]["tls_floor"])

    def test_the_report_and_summary_show_the_section_only_with_tls(self):
        page = report.render(with_mtls(), "", "")
        self.assertIn("<h2>TLS against plaintext</h2>", page)
        self.assertIn("chart-tls-cpu", page)
        self.assertIn("## TLS against plaintext", report.summary_markdown(with_mtls()))
        self.assertNotIn("## TLS against plaintext", report.summary_markdown(sample_results()))
        self.assertIsNone(view.view(sample_results())["tables"]["tls"])

    def test_the_check_wants_each_tls_stacks_paths(self):
        data = with_mtls()
        self.assertEqual([p for p in check_results.problems(data) if "no run" in p], [])

        data["runs"].pop()

        self.assertIn(
            "no run for path grpc/unary n=1000 concurrency=100 on netty · reactor-netty client · JDK 17 · mTLS",
            check_results.problems(data),
        )

    def test_the_check_wants_every_side_on_the_jdk_under_tls_provider_jdk(self):
        data = with_mtls()
        data["settings"]["tls_provider"] = "openssl"
        self.assertEqual(check_results.tls_problems(data["settings"]), [])

        data["settings"]["tls_provider"] = "jdk"

        self.assertEqual(
            check_results.tls_problems(data["settings"]),
            [
                "stack netty · reactor-netty client · JDK 17 · mTLS: TLS_PROVIDER=jdk, but grpc's square service "
                "encrypts with OpenSSL (BoringSSL)"
            ],
        )

    def test_the_check_finds_a_key_or_the_certificates_folder_in_the_results(self):
        data = with_mtls()
        self.assertEqual([p for p in check_results.problems(data) if "results.json holds" in p], [])

        data["settings"]["stacks"][1]["tls_details"]["squares"]["rest"]["how"] = "/tmp/lab-tls-x1/server.key"

        self.assertIn("results.json holds lab-tls-", check_results.problems(data))

    def test_the_check_wants_each_tls_stack_to_have_handshaken_in_its_mode(self):
        data = with_mtls()
        self.assertEqual(check_results.tls_problems(data["settings"]), [])
        details = data["settings"]["stacks"][1]["tls_details"]

        details["aggregator"]["mode"] = "on"
        details["squares"]["grpc"] = {"error": "no handshake with 127.0.0.1:6565: timed out"}
        details["squares"]["rest"]["mode"] = "on"

        self.assertEqual(
            check_results.tls_problems(data["settings"]),
            [
                "stack netty · reactor-netty client · JDK 17 · mTLS: the aggregator said TLS mode on, not mtls",
                "stack netty · reactor-netty client · JDK 17 · mTLS: grpc's square service: no handshake with "
                "127.0.0.1:6565: timed out",
                "stack netty · reactor-netty client · JDK 17 · mTLS: rest's square service said TLS mode on, not mtls",
            ],
        )
