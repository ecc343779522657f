"""Checks of the monitoring and deployment files with the real tools that can run without the services, a
Docker engine or a cluster: promtool, docker-compose, hadolint, shellcheck, kubernetes-validate, and the
files' own structure."""

import http.server
import json
import os
import re
import subprocess
import tempfile
import threading
import unittest

from tests.support import MONITORING, REPO, free_port, run, tool

PROMETHEUS_CONFIGS = ("prometheus.yml", "prometheus-compose.yml")
DASHBOARD = MONITORING / "grafana" / "dashboards" / "rest-vs-grpc.json"
DATASOURCES = MONITORING / "grafana" / "provisioning" / "datasources" / "prometheus.yml"
DASHBOARD_PROVIDERS = MONITORING / "grafana" / "provisioning" / "dashboards" / "dashboards.yml"
COMPOSE = REPO / "docker-compose.yml"
COMPOSE_TLS = REPO / "docker-compose.tls.yml"
MAKE_CERTIFICATES = REPO / "tls" / "make-certificates.sh"
MANIFESTS = REPO / "k8s"
JAVA_SERVICES = ("aggregator-service", "square-rest-service", "square-grpc-service")
SQUARE_REPLICAS = ("square-rest-service-1", "square-rest-service-2", "square-grpc-service-1", "square-grpc-service-2")
EXIT_ON_OOM = "-XX:+ExitOnOutOfMemoryError"


def assert_ran(test, completed):
    test.assertEqual(
        0, completed.returncode, f"{' '.join(map(str, completed.args))} failed:\n{completed.stdout}\n{completed.stderr}"
    )


class PrometheusConfigTests(unittest.TestCase):
    def test_configs_are_valid_for_promtool(self):
        promtool = tool("promtool")
        for config in PROMETHEUS_CONFIGS:
            with self.subTest(config=config):
                assert_ran(self, run([promtool, "check", "config", config], cwd=MONITORING))

    def test_rules_are_valid_for_promtool(self):
        promtool = tool("promtool")
        rules = sorted(str(p.relative_to(MONITORING)) for p in (MONITORING / "rules").glob("*.yml"))
        self.assertTrue(rules, "no rule files in monitoring/rules")
        assert_ran(self, run([promtool, "check", "rules", *rules], cwd=MONITORING))

    def test_rules_record_the_expected_values(self):
        promtool = tool("promtool")
        assert_ran(self, run([promtool, "test", "rules", "tests/rules.test.yml"], cwd=MONITORING))

    def test_compose_config_differs_from_the_local_one_only_in_targets(self):
        def normalised(name, targets):
            text = (MONITORING / name).read_text()
            for job_targets in targets:
                listed = ", ".join(f"'{target}'" for target in job_targets)
                self.assertIn(f"[{listed}]", text, name)
                text = text.replace(f"[{listed}]", "['TARGETS']")
            return [line for line in text.splitlines() if not line.lstrip().startswith("#")]

        local = normalised("prometheus.yml", [["127.0.0.1:8080"], ["127.0.0.1:7575"], ["127.0.0.1:6566"]])
        compose = normalised(
            "prometheus-compose.yml",
            [
                ["aggregator-service:8080"],
                ["square-rest-service-1:7575", "square-rest-service-2:7575"],
                ["square-grpc-service-1:6566", "square-grpc-service-2:6566"],
            ],
        )
        self.assertEqual(local, compose)


class DashboardTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dashboard = json.loads(DASHBOARD.read_text())
        cls.panels = [p for p in cls.dashboard["panels"] if p["type"] != "row"]

    def test_every_panel_queries_the_provisioned_datasource(self):
        uid = re.search(r"^\s*uid:\s*(\S+)", DATASOURCES.read_text(), re.MULTILINE).group(1)
        for panel in self.panels:
            with self.subTest(panel=panel["title"]):
                self.assertEqual(uid, panel["datasource"]["uid"])
                self.assertTrue(panel["targets"])
                for target in panel["targets"]:
                    self.assertEqual(uid, target["datasource"]["uid"])
                    self.assertTrue(target["expr"].strip())

    def test_panels_have_unique_ids_and_do_not_overlap(self):
        ids = [p["id"] for p in self.dashboard["panels"]]
        self.assertEqual(len(ids), len(set(ids)))
        taken = set()
        for panel in self.dashboard["panels"]:
            pos = panel["gridPos"]
            self.assertLessEqual(pos["x"] + pos["w"], 24, panel["title"])
            cells = {(x, y) for x in range(pos["x"], pos["x"] + pos["w"]) for y in range(pos["y"], pos["y"] + pos["h"])}
            self.assertFalse(cells & taken, f"{panel['title']} overlaps another panel")
            taken |= cells

    def test_dashboard_shows_what_the_issue_asks_for(self):
        queries = " ".join(t["expr"] for p in self.panels for t in p["targets"])
        for metric in (
            "aggregator_fanout_seconds_count",
            "aggregator_fanout_seconds_bucket",
            "aggregator_downstream_calls_total",
            "aggregator_downstream_latency_seconds_bucket",
            "aggregator_downstream_inflight",
            "aggregator_stream_messages_total",
            "process_cpu_usage",
            "jvm_memory_used_bytes",
            "http_server_requests_seconds_bucket",
            "grpc_server_processing_duration_seconds_bucket",
        ):
            with self.subTest(metric=metric):
                self.assertIn(metric, queries)
        self.assertIn("histogram_quantile(0.99", queries)
        self.assertIn("histogram_quantile(0.5", queries)

    def test_provisioning_loads_the_folder_compose_mounts(self):
        path = re.search(r"^\s*path:\s*(\S+)", DASHBOARD_PROVIDERS.read_text(), re.MULTILINE).group(1)
        self.assertIn(f"./monitoring/grafana/dashboards:{path}:ro", COMPOSE.read_text())


class ComposeTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        compose = tool("docker-compose")
        completed = run([compose, "-f", str(COMPOSE), "config"], cwd=REPO)
        if completed.returncode != 0:
            raise AssertionError(f"docker-compose config failed:\n{completed.stderr}")
        cls.services = cls.service_blocks(completed.stdout)

    @staticmethod
    def service_blocks(resolved):
        """The resolved file's service sections as text, by name (docker-compose config prints 2-space YAML)."""
        blocks, name = {}, None
        in_services = False
        for line in resolved.splitlines():
            if re.match(r"^\S", line):
                in_services = line.startswith("services:")
                name = None
                continue
            match = re.match(r"^  (\S+):$", line)
            if in_services and match:
                name = match.group(1)
                blocks[name] = []
            elif in_services and name:
                blocks[name].append(line)
        return {k: "\n".join(v) for k, v in blocks.items()}

    def test_compose_file_is_valid(self):
        assert_ran(self, run([tool("docker-compose"), "-f", str(COMPOSE), "config", "-q"], cwd=REPO))

    def test_it_runs_the_aggregator_two_replicas_of_each_square_service_prometheus_and_grafana(self):
        self.assertEqual({"aggregator-service", *SQUARE_REPLICAS, "prometheus", "grafana"}, set(self.services))

    def test_every_service_has_a_health_check_and_limits(self):
        for name, block in self.services.items():
            with self.subTest(service=name):
                self.assertIn("healthcheck:", block)
                self.assertRegex(block, r"(?m)^    cpus: [0-9.]+$")
                self.assertRegex(block, r"(?m)^    mem_limit: \S+$")

    def test_square_service_replicas_get_the_same_limits(self):
        def limits(name):
            block = self.services[name]
            return re.search(r"cpus: (\S+)", block).group(1), re.search(r"mem_limit: (\S+)", block).group(1)

        self.assertEqual(1, len({limits(name) for name in SQUARE_REPLICAS}))

    def test_aggregator_waits_for_one_healthy_replica_of_each_and_calls_all_at_their_container_addresses(self):
        block = self.services["aggregator-service"]
        self.assertIn(
            "AGGREGATOR_REST_BASE_URL: http://square-rest-service-1:7575,http://square-rest-service-2:7575", block
        )
        self.assertIn("AGGREGATOR_GRPC_TARGET: square-grpc-service-1:6565,square-grpc-service-2:6565", block)
        self.assertEqual(2, block.count("condition: service_healthy"))
        self.assertEqual(2, block.count("condition: service_started"))

    def test_java_services_are_built_from_the_repository_and_keep_the_images_entrypoint(self):
        for name in ("aggregator-service", *SQUARE_REPLICAS):
            module = re.sub(r"-\d$", "", name)
            with self.subTest(service=name):
                self.assertIn(f"MODULE: {module}", self.services[name])
                self.assertIn(f"image: rest-vs-grpc-lab/{module}:", self.services[name])
                # The entrypoint passes -XX:+ExitOnOutOfMemoryError; compose must not replace it.
                self.assertNotRegex(self.services[name], r"(?m)^    (entrypoint|command):")

    def test_published_ports_listen_on_loopback_only(self):
        for name, block in self.services.items():
            published = re.findall(r"(?m)^    - (\S+/(?:tcp|udp))$", block)
            with self.subTest(service=name):
                self.assertTrue(published, "publishes no port")
                for port in published:
                    self.assertTrue(port.startswith("127.0.0.1:"), port)


class DockerfileTests(unittest.TestCase):
    dockerfile = (REPO / "Dockerfile").read_text()

    def test_hadolint_passes(self):
        assert_ran(self, run([tool("hadolint"), "Dockerfile"], cwd=REPO))

    def test_base_images_are_temurin_17_and_runs_as_non_root_with_a_health_check(self):
        images = re.findall(r"^FROM (\S+)", self.dockerfile, re.MULTILINE)
        self.assertEqual(["eclipse-temurin:17-jdk-noble", "eclipse-temurin:17-jre-noble"], images)
        user = re.findall(r"^USER (\S+)", self.dockerfile, re.MULTILINE)
        self.assertEqual(1, len(user))
        self.assertNotIn(user[0].split(":")[0], ("0", "root"))
        self.assertRegex(self.dockerfile, r"(?m)^HEALTHCHECK .*CMD \[\"/usr/local/bin/healthcheck\"\]")

    def test_the_jar_it_copies_has_the_project_version(self):
        version = re.search(
            r"<artifactId>rest-vs-grpc-lab</artifactId>\s*<version>([^<]+)</version>", (REPO / "pom.xml").read_text()
        ).group(1)
        self.assertIn(f'target/${{MODULE}}-{version}.jar"', self.dockerfile)

    def test_build_context_leaves_out_build_output_and_history(self):
        ignored = (REPO / ".dockerignore").read_text().splitlines()
        for pattern in (".git", "**/target", "loadtest/results"):
            with self.subTest(pattern=pattern):
                self.assertIn(pattern, ignored)


def load_manifests(files):
    """Every object of these YAML files, by (kind, name)."""
    # kubernetes-validate's own interpreter has PyYAML; these tests use the standard library only.
    with open(tool("kubernetes-validate")) as script:
        python = script.readline()[2:].strip()
    loaded = run(
        [
            python,
            "-c",
            "import json, sys, yaml; print(json.dumps([d for f in sys.argv[1:] "
            "for d in yaml.safe_load_all(open(f)) if d]))",
            *map(str, files),
        ]
    )
    if loaded.returncode != 0:
        raise AssertionError(f"could not read the manifests:\n{loaded.stderr}")
    return {(o["kind"], o["metadata"]["name"]): o for o in json.loads(loaded.stdout)}


class KubernetesManifestTests(unittest.TestCase):
    """The manifests against the Kubernetes API's schemas (kubernetes-validate ships them), then what the
    schemas cannot say: probes, replicas, equal limits, the headless Service and graceful termination."""

    @classmethod
    def setUpClass(cls):
        cls.files = sorted(MANIFESTS.glob("*.yaml"))
        cls.objects = load_manifests(cls.files)

    def deployment(self, name):
        return self.objects[("Deployment", name)]

    def container(self, name):
        containers = self.deployment(name)["spec"]["template"]["spec"]["containers"]
        self.assertEqual(1, len(containers), name)
        return containers[0]

    def env(self, name):
        return {e["name"]: e.get("value") for e in self.container(name).get("env", [])}

    def test_every_manifest_passes_strict_schema_validation(self):
        self.assertEqual({f"{name}.yaml" for name in JAVA_SERVICES}, {f.name for f in self.files})
        assert_ran(self, run([tool("kubernetes-validate"), "--strict", "--quiet", *map(str, self.files)]))

    def test_schema_validation_rejects_a_misspelt_field(self):
        broken = (MANIFESTS / "square-rest-service.yaml").read_text().replace("readinessProbe:", "readynessProbe:")
        completed = subprocess.run(
            [tool("kubernetes-validate"), "--strict", "--quiet", "-"],
            input=broken,
            capture_output=True,
            text=True,
            timeout=120,
        )
        self.assertEqual(1, completed.returncode, completed.stderr)
        self.assertIn("'readynessProbe' was unexpected", completed.stdout + completed.stderr)

    def test_each_service_is_a_deployment_and_a_service_of_the_image_compose_builds(self):
        self.assertEqual(
            {(kind, name) for name in JAVA_SERVICES for kind in ("Deployment", "Service")}, set(self.objects)
        )
        version = re.search(
            r"<artifactId>rest-vs-grpc-lab</artifactId>\s*<version>([^<]+)</version>", (REPO / "pom.xml").read_text()
        ).group(1)
        for name in JAVA_SERVICES:
            with self.subTest(service=name):
                self.assertEqual(f"rest-vs-grpc-lab/{name}:{version}", self.container(name)["image"])
                self.assertEqual(
                    self.deployment(name)["spec"]["selector"]["matchLabels"],
                    self.objects[("Service", name)]["spec"]["selector"],
                )

    def test_probes_ask_the_actuators_liveness_and_readiness_groups(self):
        for name in JAVA_SERVICES:
            container = self.container(name)
            ports = {p["name"]: p["containerPort"] for p in container["ports"]}
            with self.subTest(service=name):
                for probe, group in (
                    ("startupProbe", "liveness"),
                    ("livenessProbe", "liveness"),
                    ("readinessProbe", "readiness"),
                ):
                    get = container[probe]["httpGet"]
                    self.assertEqual(f"/actuator/health/{group}", get["path"])
                    self.assertEqual(
                        7575 if name == "square-rest-service" else 6566 if name == "square-grpc-service" else 8080,
                        ports[get["port"]],
                    )

    def test_square_services_run_two_replicas_with_equal_requests_and_limits(self):
        resources = [self.container(name)["resources"] for name in ("square-rest-service", "square-grpc-service")]
        self.assertEqual(resources[0], resources[1])
        self.assertEqual(resources[0]["requests"], resources[0]["limits"])
        for name in ("square-rest-service", "square-grpc-service"):
            with self.subTest(service=name):
                self.assertGreaterEqual(self.deployment(name)["spec"]["replicas"], 2)
                self.assertEqual(0, self.deployment(name)["spec"]["strategy"]["rollingUpdate"]["maxUnavailable"])

    def test_the_aggregator_balances_grpc_per_call_over_the_headless_service(self):
        service = self.objects[("Service", "square-grpc-service")]["spec"]
        self.assertEqual("None", service["clusterIP"])
        grpc_port = next(p["port"] for p in service["ports"] if p["name"] == "grpc")
        aggregator = self.env("aggregator-service")
        self.assertEqual(f"dns:///square-grpc-service:{grpc_port}", aggregator["AGGREGATOR_GRPC_TARGET"])
        self.assertEqual("http://square-rest-service:7575", aggregator["AGGREGATOR_REST_BASE_URL"])

    def test_termination_leaves_time_for_the_pre_stop_pause_and_the_graceful_shutdown(self):
        spring_shutdown_phase_s = 30  # spring.lifecycle.timeout-per-shutdown-phase, Spring Boot's default
        for name in JAVA_SERVICES:
            pod = self.deployment(name)["spec"]["template"]["spec"]
            pause = self.container(name)["lifecycle"]["preStop"]["exec"]["command"]
            with self.subTest(service=name):
                self.assertEqual("sleep", pause[0])
                self.assertGreater(pod["terminationGracePeriodSeconds"], int(pause[1]) + spring_shutdown_phase_s)

    def test_containers_keep_the_images_entrypoint_and_run_as_non_root(self):
        for name in JAVA_SERVICES:
            container = self.container(name)
            with self.subTest(service=name):
                # The entrypoint passes -XX:+ExitOnOutOfMemoryError: a JVM that runs out is restarted.
                self.assertNotIn("command", container)
                self.assertNotIn("args", container)
                self.assertTrue(self.deployment(name)["spec"]["template"]["spec"]["securityContext"]["runAsNonRoot"])


class KubernetesTlsTests(unittest.TestCase):
    """k8s/tls/: the ConfigMaps that turn on mutual TLS, read by the Deployments of k8s/ beside the Secrets
    they mount, both optional so that without them every service runs in plaintext."""

    SECRETS = {
        "aggregator-service": ("square-tls-client", {"ca.pem", "client.pem", "client.key"}),
        "square-rest-service": ("square-tls-server", {"ca.pem", "server.pem", "server.key"}),
        "square-grpc-service": ("square-tls-server", {"ca.pem", "server.pem", "server.key"}),
    }

    @classmethod
    def setUpClass(cls):
        cls.files = sorted((MANIFESTS / "tls").glob("*.yaml"))
        cls.objects = load_manifests(cls.files)
        cls.base = load_manifests(sorted(MANIFESTS.glob("*.yaml")))

    def container(self, name):
        return self.base[("Deployment", name)]["spec"]["template"]["spec"]["containers"][0]

    def test_the_settings_pass_strict_schema_validation(self):
        self.assertEqual({("ConfigMap", f"{name}-tls") for name in JAVA_SERVICES}, set(self.objects))
        assert_ran(self, run([tool("kubernetes-validate"), "--strict", "--quiet", *map(str, self.files)]))

    def test_each_deployment_reads_its_settings_and_mounts_its_secret_both_optional(self):
        for name in JAVA_SERVICES:
            secret, _ = self.SECRETS[name]
            pod = self.base[("Deployment", name)]["spec"]["template"]["spec"]
            container = self.container(name)
            with self.subTest(service=name):
                self.assertIn({"configMapRef": {"name": f"{name}-tls", "optional": True}}, container["envFrom"])
                self.assertIn(
                    {"name": "tls", "mountPath": "/etc/square-tls", "readOnly": True}, container["volumeMounts"]
                )
                volume = next(v for v in pod["volumes"] if v["name"] == "tls")
                self.assertEqual({"secretName": secret, "optional": True, "defaultMode": 0o440}, volume["secret"])
                self.assertEqual(pod["securityContext"]["runAsGroup"], pod["securityContext"]["fsGroup"])

    def test_every_file_named_is_one_its_secret_holds(self):
        for name in JAVA_SERVICES:
            _, held = self.SECRETS[name]
            data = self.objects[("ConfigMap", f"{name}-tls")]["data"]
            named = {m for v in data.values() for m in re.findall(r"/etc/square-tls/([\w.]+)", v)}
            with self.subTest(service=name):
                self.assertEqual(held, named)

    def test_the_rest_service_serves_tls_on_the_services_https_port_and_keeps_the_probes_port_plaintext(self):
        data = self.objects[("ConfigMap", "square-rest-service-tls")]["data"]
        ports = {p["name"]: p["port"] for p in self.base[("Service", "square-rest-service")]["spec"]["ports"]}
        container_ports = {p["name"]: p["containerPort"] for p in self.container("square-rest-service")["ports"]}
        self.assertEqual(str(container_ports["https"]), data["SERVER_PORT"])
        self.assertEqual(ports["https"], container_ports["https"])
        self.assertEqual(str(container_ports["http"]), data["MANAGEMENT_SERVER_PORT"])
        self.assertEqual("false", data["MANAGEMENT_SERVER_SSL_ENABLED"])
        self.assertEqual("need", data["SERVER_SSL_CLIENT_AUTH"])
        self.assertEqual(
            "REQUIRE", self.objects[("ConfigMap", "square-grpc-service-tls")]["data"]["GRPC_SERVER_SECURITY_CLIENTAUTH"]
        )

    def test_the_aggregator_calls_the_rest_service_over_https_whatever_its_own_env_says(self):
        data = self.objects[("ConfigMap", "aggregator-service-tls")]["data"]
        https = next(
            p["port"] for p in self.base[("Service", "square-rest-service")]["spec"]["ports"] if p["name"] == "https"
        )
        # A container's env wins over envFrom; SPRING_APPLICATION_JSON wins over environment variables in Spring.
        self.assertEqual(
            {"aggregator.rest.base-url": f"https://square-rest-service:{https}"},
            json.loads(data["SPRING_APPLICATION_JSON"]),
        )
        self.assertEqual("client", data["AGGREGATOR_TLS_BUNDLE"])


class ServiceJvmOptionsTests(unittest.TestCase):
    """Every place that starts a service passes the repository's one jvm.options, and it holds
    -XX:+ExitOnOutOfMemoryError (compose and the manifests keep the image's entrypoint: their tests above)."""

    def test_the_file_is_what_java_reads_and_exits_on_out_of_memory(self):
        options = [line.strip() for line in (REPO / "jvm.options").read_text().splitlines()]
        options = [line for line in options if line and not line.startswith("#")]
        self.assertIn(EXIT_ON_OOM, options)
        self.assertIn("-Xmx128m", options)
        for option in options:
            with self.subTest(option=option):
                # One option per line: java splits a line at spaces, and this file is read by people too.
                self.assertRegex(option, r"^-\S+$")
        java = run(["java", "@" + str(REPO / "jvm.options"), "-XX:+PrintFlagsFinal", "-version"], cwd=REPO)
        assert_ran(self, java)
        self.assertRegex(java.stdout, r"bool ExitOnOutOfMemoryError\s+= true")

    def test_the_images_entrypoint(self):
        dockerfile = (REPO / "Dockerfile").read_text()
        entrypoint = re.search(r"(?m)^ENTRYPOINT (\[.*])$", dockerfile).group(1)
        self.assertEqual(
            ["java", "@/opt/service/jvm.options", "-jar", "/opt/service/service.jar"], json.loads(entrypoint)
        )
        self.assertRegex(dockerfile, r"(?m)^COPY jvm.options /opt/service/jvm.options$")

    def test_spring_boot_run_with_full_jit(self):
        pom = (REPO / "pom.xml").read_text()
        self.assertRegex(
            pom,
            r"<artifactId>spring-boot-maven-plugin</artifactId>\s*<configuration>\s*(<!--.*?-->\s*)?"
            r"<jvmArguments>@\$\{maven.multiModuleProjectDirectory\}/jvm.options</jvmArguments>",
        )
        # Spring Boot's optimized launch would add -XX:TieredStopAtLevel=1 and serve half as fast.
        self.assertIn("<optimizedLaunch>false</optimizedLaunch>", pom)

    def test_the_lab(self):
        settings = (REPO / "loadtest" / "lab" / "core" / "settings.py").read_text()
        self.assertRegex(settings, r'\(\s*"JAVA_OPTS",\s*service_jvm_options\(\)')

    def test_the_readmes_java_commands(self):
        commands = re.findall(r"java (?:\S+ )*-jar \S+", (REPO / "README.md").read_text())
        self.assertTrue(commands)
        for command in commands:
            with self.subTest(command=command):
                self.assertTrue(command.startswith("java @jvm.options "), command)

    def test_no_container_sets_its_own_heap(self):
        files = [REPO / "docker-compose.yml", *sorted((REPO / "k8s").glob("*.yaml"))]
        for path in files:
            with self.subTest(file=path.name):
                self.assertNotRegex(path.read_text(), r"MaxRAMPercentage|-Xmx")


class ComposeTlsTests(unittest.TestCase):
    """docker-compose.tls.yml over docker-compose.yml: mutual TLS between the services from compose secrets."""

    @classmethod
    def setUpClass(cls):
        completed = run([tool("docker-compose"), "-f", str(COMPOSE), "-f", str(COMPOSE_TLS), "config"], cwd=REPO)
        if completed.returncode != 0:
            raise AssertionError(f"docker-compose config failed:\n{completed.stderr}")
        cls.services = ComposeTests.service_blocks(completed.stdout)

    def test_each_rest_replica_serves_mutual_tls_on_7443_and_its_actuator_in_plaintext_on_7575(self):
        for name in ("square-rest-service-1", "square-rest-service-2"):
            with self.subTest(service=name):
                block = self.services[name]
                for line in (
                    "SERVER_PORT: '7443'",
                    # Where the image's health check (HEALTH_PORT) and Prometheus read it, as without TLS.
                    "MANAGEMENT_SERVER_PORT: '7575'",
                    'MANAGEMENT_SERVER_SSL_ENABLED: "false"',
                    "SERVER_SSL_BUNDLE: square",
                    "SERVER_SSL_CLIENT_AUTH: need",
                    "SPRING_SSL_BUNDLE_PEM_SQUARE_KEYSTORE_CERTIFICATE: /run/secrets/server.pem",
                    "SPRING_SSL_BUNDLE_PEM_SQUARE_KEYSTORE_PRIVATEKEY: /run/secrets/server.key",
                    "SPRING_SSL_BUNDLE_PEM_SQUARE_TRUSTSTORE_CERTIFICATE: /run/secrets/ca.pem",
                    "HEALTH_PORT: '7575'",
                    "- source: tls-server-key",
                ):
                    self.assertIn(line, block)

    def test_each_grpc_replica_requires_a_client_certificate_and_keeps_its_actuator(self):
        for name in ("square-grpc-service-1", "square-grpc-service-2"):
            with self.subTest(service=name):
                block = self.services[name]
                for line in (
                    'GRPC_SERVER_SECURITY_ENABLED: "true"',
                    "GRPC_SERVER_SECURITY_CERTIFICATECHAIN: file:/run/secrets/server.pem",
                    "GRPC_SERVER_SECURITY_PRIVATEKEY: file:/run/secrets/server.key",
                    "GRPC_SERVER_SECURITY_CLIENTAUTH: REQUIRE",
                    "GRPC_SERVER_SECURITY_TRUSTCERTCOLLECTION: file:/run/secrets/ca.pem",
                    "HEALTH_PORT: '6566'",
                ):
                    self.assertIn(line, block)

    def test_the_aggregator_calls_every_replica_over_tls_presenting_its_own_certificate(self):
        block = self.services["aggregator-service"]
        for line in (
            "AGGREGATOR_REST_BASE_URL: https://square-rest-service-1:7443,https://square-rest-service-2:7443",
            "AGGREGATOR_GRPC_TARGET: square-grpc-service-1:6565,square-grpc-service-2:6565",
            "AGGREGATOR_TLS_BUNDLE: client",
            "SPRING_SSL_BUNDLE_PEM_CLIENT_TRUSTSTORE_CERTIFICATE: /run/secrets/ca.pem",
            "SPRING_SSL_BUNDLE_PEM_CLIENT_KEYSTORE_CERTIFICATE: /run/secrets/client.pem",
            "SPRING_SSL_BUNDLE_PEM_CLIENT_KEYSTORE_PRIVATEKEY: /run/secrets/client.key",
        ):
            self.assertIn(line, block)
        self.assertNotIn("tls-server-key", block)

    def test_no_key_is_kept_in_the_repository(self):
        self.assertIn("tls/out/", (REPO / ".gitignore").read_text().splitlines())
        listed = run(["git", "ls-files"], cwd=REPO).stdout.split()
        self.assertEqual([], [name for name in listed if name.endswith((".key", ".p12", ".jks"))])
        # A PEM key under any name (the pattern is split so that this file does not hold it).
        holding = run(["git", "grep", "-l", "-e", "PRIVATE " + "KEY-----", "--", "."], cwd=REPO).stdout.split()
        self.assertEqual([], holding)


class MakeCertificatesTests(unittest.TestCase):
    """tls/make-certificates.sh with the real openssl: a CA, a server and a client certificate that verify."""

    def test_writes_certificates_that_verify_with_keys_for_the_owner_only(self):
        with tempfile.TemporaryDirectory() as folder:
            out = f"{folder}/out"
            assert_ran(self, run([str(MAKE_CERTIFICATES), out, "square-rest-service-1", "10.0.0.5"]))

            for name in ("server.key", "client.key"):
                self.assertEqual(0o600, os.stat(f"{out}/{name}").st_mode & 0o777, name)
            self.assertEqual(
                ["ca.pem", "client.key", "client.pem", "server.key", "server.pem"], sorted(os.listdir(out))
            )
            verified = run(["openssl", "verify", "-CAfile", f"{out}/ca.pem", f"{out}/server.pem", f"{out}/client.pem"])
            assert_ran(self, verified)
            names = run(["openssl", "x509", "-in", f"{out}/server.pem", "-noout", "-ext", "subjectAltName"]).stdout
            self.assertIn("DNS:localhost, IP Address:127.0.0.1, DNS:square-rest-service-1, IP Address:10.0.0.5", names)

    def test_bad_arguments_get_a_message_and_no_files(self):
        with tempfile.TemporaryDirectory() as folder:
            for arguments, env, message in (
                ([], {}, "usage:"),
                ([f"{folder}/a"], {"DAYS": "0"}, "DAYS must be a whole number of days, at least 1; got '0'"),
                ([f"{folder}/b", "not a host"], {}, "not a host name or IP address: 'not a host'"),
            ):
                with self.subTest(arguments=arguments, env=env):
                    completed = subprocess.run(
                        [str(MAKE_CERTIFICATES), *arguments],
                        capture_output=True,
                        text=True,
                        env={**os.environ, **env},
                    )
                    self.assertEqual(2, completed.returncode)
                    self.assertIn(message, completed.stderr)
            self.assertEqual([], os.listdir(folder))


def tracked_shell_scripts():
    """Every script of the repository that git tracks, found by its shebang; mvnw is the Maven wrapper's own."""
    listed = run(["git", "ls-files"], cwd=REPO).stdout.split()
    scripts = []
    for name in listed:
        path = REPO / name
        if name == "mvnw" or not path.is_file():
            continue
        with open(path, "rb") as handle:
            if re.match(rb"#!\S*(/bash|/sh|env bash|env sh)\b", handle.readline()):
                scripts.append(path)
    return scripts


class ShellScriptTests(unittest.TestCase):
    scripts = tracked_shell_scripts()

    def test_every_script_of_the_repository_is_checked(self):
        names = {str(script.relative_to(REPO)) for script in self.scripts}
        self.assertLessEqual(
            {
                ".ci/run",
                "docker/healthcheck.sh",
                "loadtest/run.sh",
                "loadtest/python-env.sh",
                "monitoring/run-prometheus.sh",
                "monitoring/install-tools.sh",
                "tls/make-certificates.sh",
            },
            names,
        )

    def test_scripts_are_executable_and_pass_shellcheck(self):
        shellcheck = tool("shellcheck")
        for script in self.scripts:
            with self.subTest(script=script.name):
                self.assertTrue(script.stat().st_mode & 0o111, f"{script} is not executable")
                assert_ran(self, run([shellcheck, str(script)]))

    def test_healthcheck_accepts_only_a_200_that_says_up(self):
        healthcheck = str(REPO / "docker" / "healthcheck.sh")
        for status, body, expected in (
            (200, '{"status":"UP"}', 0),
            (503, '{"status":"DOWN"}', 1),
            (200, '{"status":"DOWN"}', 1),
        ):
            with self.subTest(status=status, body=body), _health_server(status, body) as port:
                self.assertEqual(expected, run([healthcheck, str(port)], timeout=10).returncode)
        self.assertEqual(1, run([healthcheck, str(free_port())], timeout=10).returncode)


class _health_server:
    """A local HTTP server answering /actuator/health with a fixed status and body."""

    def __init__(self, status, body):
        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                self.send_response(status if self.path == "/actuator/health" else 404)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(body.encode())

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)

    def __enter__(self):
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self.server.server_address[1]

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


class KubernetesLabTests(unittest.TestCase):
    """k8s/lab/: the lab as a Job beside the services (TARGET mode, loadtest/Dockerfile's image) and the Prometheus it
    reads their CPU and memory from; the services' Deployments say which pod and node they run on."""

    @classmethod
    def setUpClass(cls):
        cls.files = sorted((MANIFESTS / "lab").glob("*.yaml"))
        cls.objects = load_manifests(cls.files)
        cls.base = load_manifests(sorted(MANIFESTS.glob("*.yaml")))

    def job_container(self):
        return self.objects[("Job", "rest-vs-grpc-lab")]["spec"]["template"]["spec"]["containers"][0]

    def job_env(self):
        return {e["name"]: e["value"] for e in self.job_container()["env"]}

    def test_the_job_and_its_prometheus_pass_strict_schema_validation(self):
        self.assertEqual({"lab-job.yaml", "prometheus.yaml"}, {f.name for f in self.files})
        assert_ran(self, run([tool("kubernetes-validate"), "--strict", "--quiet", *map(str, self.files)]))

    def test_prometheus_configuration_passes_promtool(self):
        config = self.objects[("ConfigMap", "lab-prometheus")]["data"]["prometheus.yml"]
        discovery = (
            "    kubernetes_sd_configs:\n      - role: pod\n        namespaces:\n          own_namespace: true\n"
        )
        self.assertIn(discovery, config)
        # Debian's promtool is built without Kubernetes discovery: the rest (relabelling, intervals) is checked with a
        # static target in its place.
        checkable = config.replace(discovery, "    static_configs:\n      - targets: ['pod:8080']\n")
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "prometheus.yml")
            with open(path, "w") as handle:
                handle.write(checkable)
            assert_ran(self, run([tool("promtool"), "check", "config", path]))
        self.assertIn("scrape_interval: 5s", config)

    def test_the_job_measures_the_aggregators_service_with_cpu_from_that_prometheus(self):
        env = self.job_env()
        aggregator_port = self.objects_port(self.base[("Service", "aggregator-service")])
        prometheus_port = self.objects_port(self.objects[("Service", "lab-prometheus")])
        self.assertEqual(f"http://aggregator-service:{aggregator_port}", env["TARGET"])
        self.assertEqual(f"http://lab-prometheus:{prometheus_port}", env["TARGET_PROMETHEUS"])
        # Every variable it sets is one of the lab's knobs (or the Job's own hold), as loadtest/README.md lists them.
        knobs = set(re.findall(r"^\| `([A-Z_]+)` \|", (REPO / "loadtest" / "README.md").read_text(), re.MULTILINE))
        self.assertLessEqual(set(env) - {"HOLD_SECONDS"}, knobs)
        # Two of Prometheus's 5 s scrapes or more in every window.
        self.assertGreaterEqual(float(env["DURATION"]), 10)

    def test_the_job_runs_the_lab_image_once_and_turns_ready_when_its_results_are_written(self):
        container = self.job_container()
        version = re.search(
            r"<artifactId>rest-vs-grpc-lab</artifactId>\s*<version>([^<]+)</version>", (REPO / "pom.xml").read_text()
        ).group(1)
        self.assertEqual(f"rest-vs-grpc-lab/loadtest:{version}", container["image"])
        self.assertEqual(0, self.objects[("Job", "rest-vs-grpc-lab")]["spec"]["backoffLimit"])
        script = container["args"][0]
        self.assertIn("bash loadtest/run.sh", script)
        self.assertEqual(["test", "-f", "/results/done"], container["readinessProbe"]["exec"]["command"])
        self.assertIn("touch /results/done", script)
        self.assertIn({"name": "results", "mountPath": "/results"}, container["volumeMounts"])

    def test_prometheus_keeps_the_pods_the_services_annotate(self):
        for name in JAVA_SERVICES:
            annotations = self.base[("Deployment", name)]["spec"]["template"]["metadata"]["annotations"]
            with self.subTest(service=name):
                self.assertEqual("true", annotations["prometheus.io/scrape"])
                self.assertEqual("/actuator/prometheus", annotations["prometheus.io/path"])

    def test_every_service_knows_its_pod_and_node_from_the_downward_api(self):
        for name in JAVA_SERVICES:
            env = {
                e["name"]: e.get("valueFrom")
                for e in self.base[("Deployment", name)]["spec"]["template"]["spec"]["containers"][0]["env"]
            }
            with self.subTest(service=name):
                self.assertEqual({"fieldRef": {"fieldPath": "metadata.name"}}, env["POD_NAME"])
                self.assertEqual({"fieldRef": {"fieldPath": "spec.nodeName"}}, env["NODE_NAME"])

    def test_the_lab_image_passes_hadolint_and_runs_as_non_root_without_java(self):
        assert_ran(self, run([tool("hadolint"), "loadtest/Dockerfile"], cwd=REPO))
        dockerfile = (REPO / "loadtest" / "Dockerfile").read_text()
        final = dockerfile[dockerfile.rindex("\nFROM ") :]
        self.assertIn("FROM python:3.11-slim-bookworm", final)
        self.assertIn("apache2-utils", final)
        self.assertRegex(final, r"(?m)^USER 10001:10001$")
        self.assertNotIn("openjdk", final)

    @staticmethod
    def objects_port(service):
        return service["spec"]["ports"][0]["port"]


if __name__ == "__main__":
    unittest.main()
