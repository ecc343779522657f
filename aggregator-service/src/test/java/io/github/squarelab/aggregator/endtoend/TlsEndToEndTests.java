package io.github.squarelab.aggregator.endtoend;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.github.squarelab.proto.Input;
import io.github.squarelab.proto.SquareRpcGrpc;
import io.grpc.ChannelCredentials;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.TlsChannelCredentials;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The aggregator's jar in front of the real square services over TLS, and over mutual TLS, all configured by ordinary
 * Spring properties (SSL bundles, net.devh's grpc.server.security.*) with a throwaway CA: every path's exact answer
 * through every REST client, and the square services refuse what the mode does not allow.
 */
class TlsEndToEndTests {

    private static final String[] PATHS = {"rest/unary", "rest/h2c", "grpc/unary", "grpc/pingpong", "grpc/stream"};

    @TempDir
    static Path folder;

    private static TestCertificates authority;
    private static TestCertificates server;
    private static TestCertificates client;

    private final HttpClient http = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5))
            .build();

    @BeforeAll
    static void makeCertificates() throws Exception {
        authority = TestCertificates.authority(folder, "lab-ca");
        server = authority.issue("square-server");
        client = authority.issue("aggregator-client");
    }

    @Nested
    @TestInstance(TestInstance.Lifecycle.PER_CLASS)
    class OverTls extends Mode {

        OverTls() {
            super(false);
        }

        @Test
        void theSquareServicesAlsoServeAClientWithoutACertificate() throws Exception {
            assertThat(directRestCall(rest, trustingTheAuthority()).body()).isEqualTo("4");
            assertThat(directGrpcCall(
                            grpc,
                            TlsChannelCredentials.newBuilder()
                                    .trustManager(authority.certificate().toFile())
                                    .build()))
                    .isEqualTo(4);
        }
    }

    @Nested
    @TestInstance(TestInstance.Lifecycle.PER_CLASS)
    class OverMutualTls extends Mode {

        OverMutualTls() {
            super(true);
        }

        @Test
        void theSquareServicesRefuseAClientWithoutACertificate() throws Exception {
            assertThat(catchThrowable(() -> directRestCall(rest, trustingTheAuthority())))
                    .isInstanceOf(IOException.class);
            assertThatThrownBy(() -> directGrpcCall(
                            grpc,
                            TlsChannelCredentials.newBuilder()
                                    .trustManager(authority.certificate().toFile())
                                    .build()))
                    .isInstanceOfSatisfying(
                            StatusRuntimeException.class,
                            e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE));
        }

        @Test
        void theSquareServicesServeAClientWithTheirAuthoritysCertificate() throws Exception {
            assertThat(directGrpcCall(
                            grpc,
                            TlsChannelCredentials.newBuilder()
                                    .trustManager(authority.certificate().toFile())
                                    .keyManager(
                                            client.certificate().toFile(),
                                            client.privateKey().toFile())
                                    .build()))
                    .isEqualTo(4);
        }
    }

    /** One TLS mode: its two square services, and two aggregators, each path's default client and the others. */
    abstract class Mode {

        private final boolean mutual;
        ServiceProcess rest;
        ServiceProcess grpc;
        ServiceProcess aggregator;
        ServiceProcess otherClients;

        Mode(boolean mutual) {
            this.mutual = mutual;
        }

        @BeforeAll
        void startServices() throws Exception {
            List<String> restTls = new ArrayList<>(List.of(
                    "--server.ssl.bundle=square",
                    "--spring.ssl.bundle.pem.square.keystore.certificate=" + server.certificate(),
                    "--spring.ssl.bundle.pem.square.keystore.private-key=" + server.privateKey()));
            List<String> grpcTls = new ArrayList<>(List.of(
                    "--grpc.server.security.enabled=true",
                    "--grpc.server.security.certificate-chain=file:" + server.certificate(),
                    "--grpc.server.security.private-key=file:" + server.privateKey()));
            if (mutual) {
                restTls.addAll(List.of(
                        "--server.ssl.client-auth=need",
                        "--spring.ssl.bundle.pem.square.truststore.certificate=" + authority.certificate()));
                grpcTls.addAll(List.of(
                        "--grpc.server.security.client-auth=REQUIRE",
                        "--grpc.server.security.trust-cert-collection=file:" + authority.certificate()));
            }
            rest = ServiceProcess.restTls(name(), restTls.toArray(String[]::new));
            grpc = ServiceProcess.grpcTls(name(), grpcTls.toArray(String[]::new));
            CompletableFuture.allOf(startAsync(rest), startAsync(grpc)).join();
            aggregator = aggregator(name());
            // Each REST client the default does not use: java.net.http (rest/unary only) and WebClient over
            // Reactor Netty under TLS, Jetty and Apache under mutual TLS.
            otherClients = mutual
                    ? aggregator(
                            name() + "-jetty-apache",
                            "--aggregator.rest.client=jetty",
                            "--aggregator.rest.h2c-client=apache")
                    : aggregator(
                            name() + "-jdk-webclient",
                            "--aggregator.rest.client=jdk",
                            "--aggregator.rest.h2c-client=webclient");
            CompletableFuture.allOf(startAsync(aggregator), startAsync(otherClients))
                    .join();
        }

        @AfterAll
        void stopServices() throws Exception {
            ServiceProcess.closeAll(otherClients, aggregator, rest, grpc);
        }

        @ParameterizedTest
        @CsvSource({
            "rest/unary, 0, ''",
            "rest/unary, 1, ''",
            "rest/unary, 100, ''",
            "rest/unary, 10, ?payload=collection",
            "rest/h2c, 0, ''",
            "rest/h2c, 1, ''",
            "rest/h2c, 100, ''",
            "rest/h2c, 10, ?payload=collection",
            "grpc/unary, 0, ''",
            "grpc/unary, 1, ''",
            "grpc/unary, 100, ''",
            "grpc/unary, 10, ?payload=collection",
            "grpc/pingpong, 0, ''",
            "grpc/pingpong, 1, ''",
            "grpc/pingpong, 100, ''",
            "grpc/pingpong, 10, ?payload=collection",
            "grpc/stream, 0, ''",
            "grpc/stream, 1, ''",
            "grpc/stream, 100, ''",
            "grpc/stream, 10, ?payload=collection"
        })
        void everyPathAnswersExactly(String path, int n, String query) throws Exception {
            HttpResponse<String> response = get(aggregator, path + "/" + n + query);

            assertThat(response.statusCode()).isEqualTo(200);
            assertThat(response.body()).isEqualTo(squares(n));
        }

        @ParameterizedTest
        @CsvSource({
            "rest/unary, 100, ''",
            "rest/unary, 10, ?payload=deep",
            "rest/h2c, 100, ''",
            "rest/h2c, 10, ?payload=deep"
        })
        void theOtherRestClientsAnswerExactly(String path, int n, String query) throws Exception {
            HttpResponse<String> response = get(otherClients, path + "/" + n + query);

            assertThat(response.statusCode()).isEqualTo(200);
            assertThat(response.body()).isEqualTo(squares(n));
        }

        @Test
        void actuatorInfoSaysTheModeAndTheBundleButNoKey() throws Exception {
            String info = get(aggregator, "actuator/info").body();

            assertThat(info)
                    .contains("\"tls\":{\"mode\":\"" + (mutual ? "mtls" : "on") + "\",\"bundle\":\"square-client\"}")
                    .doesNotContain(
                            "PRIVATE KEY",
                            client.privateKey().toString(),
                            server.privateKey().toString());
            for (ServiceProcess service : List.of(aggregator, otherClients, rest, grpc)) {
                assertThat(service.log()).doesNotContain("PRIVATE KEY");
            }
        }

        @Test
        void theSquareServicesRefusePlaintext() throws Exception {
            HttpRequest plaintext = HttpRequest.newBuilder(
                            URI.create(rest.baseUrl().replace("https:", "http:") + "/rest/square/unary/2"))
                    .timeout(Duration.ofSeconds(10))
                    .build();
            int status;
            try {
                status = http.send(plaintext, HttpResponse.BodyHandlers.ofString())
                        .statusCode();
            } catch (IOException refused) {
                status = -1;
            }
            assertThat(status).as("a plaintext request's status, -1 if refused").isNotEqualTo(200);
            assertThatThrownBy(() -> directGrpcCall(grpc, InsecureChannelCredentials.create()))
                    .isInstanceOfSatisfying(
                            StatusRuntimeException.class,
                            e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE));
        }

        /** The processes' log names: tls or mtls. */
        private String name() {
            return mutual ? "mtls" : "tls";
        }

        private ServiceProcess aggregator(String replica, String... more) throws IOException {
            List<String> arguments = new ArrayList<>(List.of(
                    "--aggregator.rest.base-url=" + rest.baseUrl(),
                    "--aggregator.grpc.target=" + grpc.grpcTarget(),
                    "--aggregator.tls.bundle=square-client",
                    "--spring.ssl.bundle.pem.square-client.truststore.certificate=" + authority.certificate()));
            if (mutual) {
                arguments.addAll(List.of(
                        "--spring.ssl.bundle.pem.square-client.keystore.certificate=" + client.certificate(),
                        "--spring.ssl.bundle.pem.square-client.keystore.private-key=" + client.privateKey()));
            }
            arguments.addAll(List.of(more));
            return ServiceProcess.aggregator(replica, ServiceProcess.LAB_JVM_OPTIONS, arguments.toArray(String[]::new));
        }
    }

    private HttpResponse<String> get(ServiceProcess service, String path) throws Exception {
        HttpRequest request = HttpRequest.newBuilder(URI.create(service.baseUrl() + "/" + path))
                .timeout(Duration.ofSeconds(30))
                .build();
        return http.send(request, HttpResponse.BodyHandlers.ofString());
    }

    private static String squares(int n) {
        return IntStream.rangeClosed(1, n)
                .mapToObj(i -> "{\"" + i + "\":" + (long) i * i + "}")
                .collect(Collectors.joining(",", "[", "]"));
    }

    private static CompletableFuture<Void> startAsync(ServiceProcess service) {
        return CompletableFuture.runAsync(() -> {
            try {
                service.start();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
    }

    /** GET /rest/square/unary/2 straight to the REST square service, over TLS with no certificate of the caller's. */
    private static HttpResponse<String> directRestCall(ServiceProcess rest, SSLContext tls) throws Exception {
        HttpClient direct = HttpClient.newBuilder()
                .sslContext(tls)
                .connectTimeout(Duration.ofSeconds(5))
                .build();
        return direct.send(
                HttpRequest.newBuilder(URI.create(rest.baseUrl() + "/rest/square/unary/2"))
                        .timeout(Duration.ofSeconds(10))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /** The square of 2 straight from the gRPC square service, with the credentials given. */
    private static long directGrpcCall(ServiceProcess grpc, ChannelCredentials credentials) throws Exception {
        ManagedChannel channel =
                Grpc.newChannelBuilder(grpc.grpcTarget(), credentials).build();
        try {
            return SquareRpcGrpc.newBlockingStub(channel)
                    .withDeadlineAfter(10, TimeUnit.SECONDS)
                    .findSquareUnary(Input.newBuilder().setNumber(2).build())
                    .getResult();
        } finally {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    private static SSLContext trustingTheAuthority() throws Exception {
        KeyStore trusted = KeyStore.getInstance(KeyStore.getDefaultType());
        trusted.load(null, null);
        try (InputStream pem = Files.newInputStream(authority.certificate())) {
            trusted.setCertificateEntry(
                    "lab-ca", CertificateFactory.getInstance("X.509").generateCertificate(pem));
        }
        TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        trust.init(trusted);
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(null, trust.getTrustManagers(), null);
        return context;
    }
}
