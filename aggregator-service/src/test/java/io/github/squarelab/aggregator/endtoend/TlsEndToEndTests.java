package io.github.squarelab.aggregator.endtoend;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.github.squarelab.aggregator.tls.TlsFailures;
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
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Tag;
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

    /** Netty's own switch off OpenSSL. */
    private static final String NO_OPENSSL = SpringGeneration.NO_OPENSSL;

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
            super(false, false);
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
            super(true, false);
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

    /** TLS with every side on the JDK's SSLEngine: Netty's own switch (the lab's TLS_PROVIDER=jdk) in each service. */
    /** Tagged: a Spring generation whose other tests show its TLS provider may leave this mode out (boot4/). */
    @Nested
    @Tag("jdk-engine")
    @TestInstance(TestInstance.Lifecycle.PER_CLASS)
    class OverTlsOnTheJdk extends Mode {

        OverTlsOnTheJdk() {
            super(false, true);
        }
    }

    /**
     * One TLS mode: its two square services, and two aggregators, each path's default client and the others; each
     * side's Netty on OpenSSL (BoringSSL, which every service carries and Netty prefers) or on the JDK's engine.
     */
    abstract class Mode {

        private final boolean mutual;
        private final boolean onTheJdk;
        ServiceProcess rest;
        ServiceProcess grpc;
        ServiceProcess aggregator;
        ServiceProcess otherClients;

        Mode(boolean mutual, boolean onTheJdk) {
            this.mutual = mutual;
            this.onTheJdk = onTheJdk;
        }

        @BeforeAll
        void startServices() throws Exception {
            TestCertificates clients = mutual ? authority : null;
            rest = ServiceProcess.restTls(
                    name(), TlsArguments.restServer(server, clients).toArray(String[]::new));
            grpc = ServiceProcess.grpcTls(
                    name(), TlsArguments.grpcServer(server, clients).toArray(String[]::new));
            if (onTheJdk) {
                rest.withJvmOption(NO_OPENSSL);
                grpc.withJvmOption(SpringGeneration.current().grpcNoOpenSsl());
            }
            ServiceProcess.startAll(rest, grpc);
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
            ServiceProcess.startAll(aggregator, otherClients);
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
            assertAnswersExactly(aggregator, path, n, query);
        }

        @ParameterizedTest
        @CsvSource({
            "rest/unary, 100, ''",
            "rest/unary, 10, ?payload=deep",
            "rest/h2c, 100, ''",
            "rest/h2c, 10, ?payload=deep"
        })
        void theOtherRestClientsAnswerExactly(String path, int n, String query) throws Exception {
            assertAnswersExactly(otherClients, path, n, query);
        }

        @Test
        void theSquareServicesSayTheirModeAndTheProviderThatEncrypts() throws Exception {
            String mode = mutual ? "mtls" : "on";

            assertThat(rest.info()).contains("\"tls\":{\"mode\":\"" + mode + "\",\"provider\":\"" + provider() + "\"}");
            assertThat(grpc.info()).contains("\"tls\":{\"mode\":\"" + mode + "\",\"provider\":\"" + provider() + "\"}");
        }

        /** What each side says it encrypts with is what encrypts: its live SSLEngines, read from the JVM itself. */
        @Test
        void eachSideEncryptsWithTheEngineItSays() throws Exception {
            for (String path : PATHS) {
                assertAnswersExactly(aggregator, path, 10, "");
            }
            String engine = onTheJdk ? "sun.security.ssl.SSLEngineImpl" : "OpenSslEngine";
            String other = onTheJdk ? "OpenSslEngine" : "sun.security.ssl.SSLEngineImpl";
            for (ServiceProcess service : List.of(aggregator, rest, grpc)) {
                assertThat(service.liveClasses())
                        .as("the classes of " + service + "'s live objects")
                        .contains(engine)
                        .doesNotContain(other);
            }
        }

        @Test
        void actuatorInfoSaysTheModeAndTheBundleButNoKey() throws Exception {
            String info = get(aggregator, "actuator/info").body();

            assertThat(info)
                    .contains("\"tls\":{\"mode\":\"" + (mutual ? "mtls" : "on") + "\",\"bundle\":\"square-client\","
                            + "\"providers\":{\"rest\":\"" + provider() + "\",\"rest-h2c\":\"" + provider() + "\","
                            + "\"grpc\":\"" + provider() + "\"}}")
                    .doesNotContain(
                            "PRIVATE KEY",
                            client.privateKey().toString(),
                            server.privateKey().toString());
            for (ServiceProcess service : List.of(aggregator, otherClients, rest, grpc)) {
                assertThat(service.log()).doesNotContain("PRIVATE KEY", "BEGIN EC", server.privateKey() + " ");
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
            // Refused because it is plaintext, as the service's one line says, not because the service is down.
            long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
            while (!rest.log().contains("not TLS (plaintext on the TLS port?)") && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertThat(rest.log())
                    .containsPattern(
                            "refused a TLS connection from /127\\.0\\.0\\.1:\\d+: not TLS \\(plaintext on the TLS"
                                    + " port\\?\\)");
            assertThatThrownBy(() -> directGrpcCall(grpc, InsecureChannelCredentials.create()))
                    .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                        assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
                        // Taken and closed, where a service that is down refuses the connection.
                        assertThat(TlsFailures.refused(e))
                                .as("refused, as by a service that is down")
                                .isFalse();
                    });
        }

        /** The processes' log names: tls, mtls or tls-jdk. */
        private String name() {
            return (mutual ? "mtls" : "tls") + (onTheJdk ? "-jdk" : "");
        }

        /** What every Netty side here encrypts with. */
        private String provider() {
            return onTheJdk ? "JDK (SunJSSE)" : "OpenSSL (BoringSSL)";
        }

        private ServiceProcess aggregator(String replica, String... more) throws IOException {
            List<String> arguments = new ArrayList<>(List.of(
                    "--aggregator.rest.base-url=" + rest.baseUrl(), "--aggregator.grpc.target=" + grpc.grpcTarget()));
            arguments.addAll(TlsArguments.aggregator(authority, mutual ? client : null));
            arguments.addAll(List.of(more));
            List<String> jvmOptions = new ArrayList<>(ServiceProcess.LAB_JVM_OPTIONS);
            if (onTheJdk) {
                jvmOptions.add(NO_OPENSSL);
            }
            return ServiceProcess.aggregator(replica, jvmOptions, arguments.toArray(String[]::new));
        }
    }

    private HttpResponse<String> get(ServiceProcess service, String path) throws Exception {
        HttpRequest request = HttpRequest.newBuilder(URI.create(service.baseUrl() + "/" + path))
                .timeout(Duration.ofSeconds(30))
                .build();
        return http.send(request, HttpResponse.BodyHandlers.ofString());
    }

    private void assertAnswersExactly(ServiceProcess service, String path, int n, String query) throws Exception {
        HttpResponse<String> response = get(service, path + "/" + n + query);

        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.body())
                .isEqualTo(IntStream.rangeClosed(1, n)
                        .mapToObj(i -> "{\"" + i + "\":" + (long) i * i + "}")
                        .collect(Collectors.joining(",", "[", "]")));
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
