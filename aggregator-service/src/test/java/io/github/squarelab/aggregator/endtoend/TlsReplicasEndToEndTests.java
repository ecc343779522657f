package io.github.squarelab.aggregator.endtoend;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Two gRPC square service replicas over TLS whose certificates each name only their own host (127.0.0.1, localhost):
 * the aggregator checks each against the host it dialled, so both serve calls; checked against the first replica's
 * host, the second would fail every handshake and its calls would all be retried on the first.
 */
class TlsReplicasEndToEndTests {

    private static final Pattern GRPC_MESSAGES =
            Pattern.compile("(?m)^grpc_server_requests_received_messages_total\\{[^}]*} (\\S+)$");

    @TempDir
    static Path folder;

    private static ServiceProcess rest;
    private static ServiceProcess byAddress;
    private static ServiceProcess byName;
    private static ServiceProcess aggregator;

    private final HttpClient http = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5))
            .build();

    @BeforeAll
    static void startServices() throws Exception {
        TestCertificates authority = TestCertificates.authority(folder, "lab-ca");
        TestCertificates address = authority.issue("address", "127.0.0.1", Instant.now(), Duration.ofDays(1));
        TestCertificates name = authority.issue("name", "localhost", Instant.now(), Duration.ofDays(1));
        rest = ServiceProcess.restTls(
                "replicas", TlsArguments.restServer(address, null).toArray(String[]::new));
        byAddress = ServiceProcess.grpcTls(
                "by-address", TlsArguments.grpcServer(address, null).toArray(String[]::new));
        byName = ServiceProcess.grpcTls(
                "by-name", TlsArguments.grpcServer(name, null).toArray(String[]::new));
        ServiceProcess.startAll(rest, byAddress, byName);
        List<String> arguments = new ArrayList<>(List.of(
                "--aggregator.rest.base-url=" + rest.baseUrl(),
                "--aggregator.grpc.target=" + byAddress.grpcTarget() + ","
                        + byName.grpcTarget().replace("127.0.0.1", "localhost")));
        arguments.addAll(TlsArguments.aggregator(authority, null));
        aggregator = ServiceProcess.aggregator(
                "tls-replicas", ServiceProcess.LAB_JVM_OPTIONS, arguments.toArray(String[]::new));
        ServiceProcess.startAll(aggregator);
    }

    @AfterAll
    static void stopServices() throws Exception {
        ServiceProcess.closeAll(aggregator, rest, byAddress, byName);
    }

    @ParameterizedTest
    @ValueSource(strings = {"grpc/unary", "grpc/stream"})
    void bothReplicasServeCallsEachOnItsOwnCertificate(String path) throws Exception {
        double addressBefore = received(byAddress);
        double nameBefore = received(byName);

        for (int request = 0; request < 10; request++) {
            HttpResponse<String> response = http.send(
                    HttpRequest.newBuilder(URI.create(aggregator.baseUrl() + "/" + path + "/20"))
                            .timeout(Duration.ofSeconds(30))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(response.statusCode()).isEqualTo(200);
            assertThat(response.body())
                    .isEqualTo(IntStream.rangeClosed(1, 20)
                            .mapToObj(i -> "{\"" + i + "\":" + i * i + "}")
                            .collect(Collectors.joining(",", "[", "]")));
        }

        assertThat(received(byAddress))
                .as("messages the 127.0.0.1 replica received")
                .isGreaterThan(addressBefore);
        assertThat(received(byName))
                .as("messages the localhost replica received")
                .isGreaterThan(nameBefore);
        assertThat(aggregator.log()).doesNotContain("No subject alternative");
    }

    /** Every message the replica's gRPC server has received, summed over its methods. */
    private static double received(ServiceProcess replica) throws Exception {
        double sum = 0;
        for (Matcher series = GRPC_MESSAGES.matcher(replica.prometheus()); series.find(); ) {
            sum += Double.parseDouble(series.group(1));
        }
        return sum;
    }
}
