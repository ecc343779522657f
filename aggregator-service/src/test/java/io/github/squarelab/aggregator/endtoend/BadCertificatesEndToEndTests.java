package io.github.squarelab.aggregator.endtoend;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every way TLS between the aggregator and the square services can be wrong, with real processes and a throwaway CA:
 * each path answers 503 at once, its problem detail naming the replica and what failed, never a hang or a retry
 * that outlasts the request.
 */
class BadCertificatesEndToEndTests {

    private static final String[] PATHS = {"rest/unary", "rest/h2c", "grpc/unary", "grpc/pingpong", "grpc/stream"};

    /** Far longer than any 503 here takes: a TLS failure must not wait for it. */
    private static final Duration CALL_DEADLINE = Duration.ofSeconds(30);

    @TempDir
    static Path folder;

    private static final List<ServiceProcess> SERVICES = new ArrayList<>();
    /** Each case's aggregator, and the two square services it calls. */
    private static final Map<String, ServiceProcess[]> CASES = new LinkedHashMap<>();

    private final HttpClient http = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5))
            .build();
    private final ObjectMapper json = new ObjectMapper();

    @BeforeAll
    static void startServices() throws Exception {
        TestCertificates authority = TestCertificates.authority(folder, "lab-ca");
        TestCertificates otherAuthority = TestCertificates.authority(folder, "other-ca");
        TestCertificates client = authority.issue("aggregator-client");
        TestCertificates server = authority.issue("square-server");
        TestCertificates elsewhere =
                authority.issue("elsewhere", "elsewhere.example", Instant.now(), Duration.ofDays(1));
        TestCertificates expired =
                authority.issue("expired", "127.0.0.1", Instant.now().minus(Duration.ofDays(2)), Duration.ofDays(1));

        ServiceProcess[] mutual = squares("bad-mutual", server, authority);
        ServiceProcess[] wrongHost = squares("bad-wrong-host", elsewhere, null);
        // Spring Boot's ssl health indicator reports a bundle with an expired certificate OUT_OF_SERVICE, as an
        // orchestrator should see it; here the service must still be up to refuse the handshake.
        ServiceProcess[] pastItsDate = squares("bad-expired", expired, null, "--management.health.ssl.enabled=false");
        ServiceProcess.startAll(
                Stream.of(mutual, wrongHost, pastItsDate).flatMap(Stream::of).toArray(ServiceProcess[]::new));

        caseOf("untrusted", mutual, true, otherAuthority, client);
        caseOf("wrong-host", wrongHost, true, authority, null);
        caseOf("expired", pastItsDate, true, authority, null);
        caseOf("no-client-certificate", mutual, true, authority, null);
        caseOf("plaintext", mutual, false, null, null);
        ServiceProcess.startAll(
                CASES.values().stream().map(services -> services[0]).toArray(ServiceProcess[]::new));
    }

    @AfterAll
    static void stopServices() throws Exception {
        ServiceProcess.closeAll(SERVICES.toArray(ServiceProcess[]::new));
    }

    static Stream<Arguments> cases() {
        List<Arguments> cases = new ArrayList<>();
        Map<String, String> why = Map.of(
                "untrusted",
                "failed the TLS handshake: unable to find valid certification path to requested target",
                "wrong-host",
                "failed the TLS handshake: No subject alternative names matching IP address 127.0.0.1",
                "expired",
                "failed the TLS handshake: the certificate has expired (NotAfter: ",
                "no-client-certificate",
                "failed the TLS handshake: Received fatal alert: ",
                "plaintext",
                "(it has not answered yet: if it serves TLS, the aggregator needs aggregator.tls.bundle and https://"
                        + " base URLs)");
        for (String name : List.of("untrusted", "wrong-host", "expired", "no-client-certificate", "plaintext")) {
            for (String path : PATHS) {
                cases.add(Arguments.of(name, path, why.get(name)));
            }
        }
        return cases.stream();
    }

    @ParameterizedTest(name = "{0}: {1}")
    @MethodSource("cases")
    void answers503AtOnceNamingTheReplicaAndWhatFailed(String name, String path, String why) throws Exception {
        ServiceProcess[] services = CASES.get(name);
        boolean rest = path.startsWith("rest/");
        String restUrl =
                name.equals("plaintext") ? services[1].baseUrl().replace("https:", "http:") : services[1].baseUrl();
        String replica = rest ? restUrl : services[2].grpcTarget();

        HttpRequest request = HttpRequest.newBuilder(URI.create(services[0].baseUrl() + "/" + path + "/3"))
                .timeout(CALL_DEADLINE.dividedBy(3))
                .build();
        HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());

        assertThat(response.statusCode()).isEqualTo(503);
        assertThat(response.headers().firstValue("Content-Type")).hasValue("application/problem+json");
        JsonNode problem = json.readTree(response.body());
        assertThat(problem.get("status").asInt()).isEqualTo(503);
        assertThat(problem.get("detail").asText())
                .startsWith("the " + (rest ? "REST" : "gRPC") + " square service at " + replica + " ")
                .contains(why);
        if (name.equals("no-client-certificate")) {
            assertThat(problem.get("detail").asText()).containsAnyOf("bad_certificate", "certificate_required");
        }
    }

    /** The REST and gRPC square services serving this certificate; requiring a client's signed by the CA, if given. */
    private static ServiceProcess[] squares(
            String name, TestCertificates certificate, TestCertificates clientAuthority, String... more)
            throws IOException {
        List<String> rest = TlsArguments.restServer(certificate, clientAuthority);
        List<String> grpc = TlsArguments.grpcServer(certificate, clientAuthority);
        rest.addAll(List.of(more));
        grpc.addAll(List.of(more));
        ServiceProcess restService = ServiceProcess.restTls(name, rest.toArray(String[]::new));
        ServiceProcess grpcService = ServiceProcess.grpcTls(name, grpc.toArray(String[]::new));
        SERVICES.add(restService);
        SERVICES.add(grpcService);
        return new ServiceProcess[] {restService, grpcService};
    }

    /**
     * An aggregator calling these square services: over TLS trusting the CA given and presenting the client
     * certificate given (if any), or in plaintext.
     */
    private static void caseOf(
            String name, ServiceProcess[] squares, boolean tls, TestCertificates trusted, TestCertificates client)
            throws IOException {
        List<String> arguments = new ArrayList<>(List.of(
                "--aggregator.rest.base-url="
                        + (tls ? squares[0].baseUrl() : squares[0].baseUrl().replace("https:", "http:")),
                "--aggregator.grpc.target=" + squares[1].grpcTarget(),
                "--aggregator.call-deadline=" + CALL_DEADLINE.toSeconds() + "s",
                "--aggregator.deadline=" + CALL_DEADLINE.toSeconds() + "s"));
        if (tls) {
            arguments.addAll(TlsArguments.aggregator(trusted, client));
        }
        ServiceProcess aggregator = ServiceProcess.aggregator(
                "bad-" + name, ServiceProcess.LAB_JVM_OPTIONS, arguments.toArray(String[]::new));
        SERVICES.add(aggregator);
        CASES.put(name, new ServiceProcess[] {aggregator, squares[0], squares[1]});
    }
}
