package io.github.squarelab.floor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.github.squarelab.floor.grpc.GrpcSquareServer;
import io.github.squarelab.floor.http.HttpSquareServer;
import io.github.squarelab.floor.measure.FloorFailure;
import io.github.squarelab.floor.measure.Measurement;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every bare transport over TLS and mutual TLS, with certificates from the project's tls/make-certificates.sh (as
 * the lab makes them): right answers, the handshake the client reports, and handshakes that fail in words.
 */
class FloorOverTlsTests {

    private static final Path CERTIFICATES = certificates("floor-tls");
    /** Another CA: a client that trusts only it distrusts the server. */
    private static final Path STRANGERS = certificates("floor-tls-strangers");

    @AfterAll
    static void deleteCertificates() throws IOException {
        for (Path folder : List.of(CERTIFICATES, STRANGERS)) {
            try (Stream<Path> files = Files.walk(folder)) {
                files.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
            }
        }
    }

    static Stream<Arguments> transportsAndModes() {
        return Stream.of(Transport.values())
                .flatMap(transport -> Stream.of(Arguments.of(transport, false), Arguments.of(transport, true)));
    }

    @ParameterizedTest(name = "{0}, mutual {1}")
    @MethodSource("transportsAndModes")
    void everyTransportAnswersRightOverTlsAndSaysWhatItsHandshakeAgreed(Transport transport, boolean mutual)
            throws Exception {
        try (SquareServer server = server(transport, serverTls(mutual))) {
            FloorTls tls = clientTls(CERTIFICATES, mutual);
            FloorClient client = client(transport, server.port(), tls);

            Measurement measurement = client.run();
            JsonObject said = JsonParser.parseString(client.toJson(measurement))
                    .getAsJsonObject()
                    .getAsJsonObject("tls");

            assertThat(measurement.calls()).isPositive();
            assertThat(measurement.answersChecked()).isGreaterThanOrEqualTo(measurement.calls());
            assertThat(said.get("mode").getAsString()).isEqualTo(mutual ? "mtls" : "on");
            assertThat(said.get("protocol").getAsString()).isEqualTo("TLSv1.3");
            assertThat(said.get("alpn").getAsString()).isEqualTo(transport == Transport.REST_UNARY ? "http/1.1" : "h2");
            // netty-tcnative's BoringSSL on the HTTP side, grpc-netty-shaded's on gRPC's.
            assertThat(said.get("provider").getAsString()).startsWith("OpenSSL (");
            assertThat(said.get("cipher").getAsString()).startsWith("TLS_");
        }
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void aServerTheClientDoesNotTrustFailsTheRunInWords(Transport transport) throws Exception {
        try (SquareServer server = server(transport, serverTls(false))) {
            FloorClient client = client(transport, server.port(), clientTls(STRANGERS, false));

            assertThatThrownBy(client::run)
                    .isInstanceOf(FloorFailure.class)
                    .hasMessageStartingWith(transport.id() + ": ")
                    .hasMessageMatching(".*the TLS (handshake|connection).* failed.*")
                    // The trust manager says why, whichever engine asked it.
                    .satisfies(failure -> assertThat(failure.getMessage())
                            .containsAnyOf("PKIX path", "does not chain with any of the trust anchors"));
        }
    }

    /** TLS 1.3 ends the client's handshake first: the server's alert comes with the first answer, and says why. */
    @ParameterizedTest
    @EnumSource(Transport.class)
    void aClientWithoutACertificateIsRefusedUnderMutualTlsInWords(Transport transport) throws Exception {
        try (SquareServer server = server(transport, serverTls(true))) {
            FloorClient client = client(transport, server.port(), clientTls(CERTIFICATES, false));

            assertThatThrownBy(client::run)
                    .isInstanceOf(FloorFailure.class)
                    .hasMessageStartingWith(transport.id() + ": ")
                    .hasMessageContaining("Received fatal alert: certificate_required");
        }
    }

    @Test
    void halfATlsConfigurationIsAUsageError() throws Exception {
        String certificate = CERTIFICATES.resolve("server.pem").toString();

        assertThat(TransportFloor.run(List.of("server", "http", "--tls-cert", certificate)))
                .isEqualTo(2);
        assertThat(TransportFloor.run(List.of(
                        "client",
                        "grpc_unary",
                        "--target",
                        "127.0.0.1:1",
                        "--in-flight",
                        "1",
                        "--warmup",
                        "0",
                        "--duration",
                        "1",
                        "--tls-cert",
                        certificate,
                        "--tls-key",
                        CERTIFICATES.resolve("client.key").toString())))
                .isEqualTo(2);
        assertThat(TransportFloor.run(
                        List.of("server", "grpc", "--tls-cert", "/nonexistent.pem", "--tls-key", "/nonexistent.key")))
                .isEqualTo(2);
    }

    private static SquareServer server(Transport transport, FloorTls tls) {
        return transport == Transport.REST_UNARY || transport == Transport.REST_H2C
                ? new HttpSquareServer("127.0.0.1", 0, Squares::square, Optional.of(tls))
                : new GrpcSquareServer("127.0.0.1", 0, Squares::square, Optional.of(tls));
    }

    private static FloorClient client(Transport transport, int port, FloorTls tls) {
        ClientSettings plain = ShortRuns.settings(transport, port, 4);
        ClientSettings settings = new ClientSettings(
                plain.transport(),
                plain.target(),
                plain.inFlight(),
                plain.streams(),
                plain.messagesPerStream(),
                plain.connections(),
                plain.warmup(),
                plain.duration(),
                tls);
        return new FloorClient(settings, new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8));
    }

    private static FloorTls serverTls(boolean mutual) {
        return new FloorTls(
                mutual ? CERTIFICATES.resolve("ca.pem").toFile() : null,
                CERTIFICATES.resolve("server.pem").toFile(),
                CERTIFICATES.resolve("server.key").toFile());
    }

    private static FloorTls clientTls(Path folder, boolean mutual) {
        return new FloorTls(
                folder.resolve("ca.pem").toFile(),
                mutual ? folder.resolve("client.pem").toFile() : null,
                mutual ? folder.resolve("client.key").toFile() : null);
    }

    /** A throwaway CA and its certificates, as the lab makes them for a run. */
    private static Path certificates(String prefix) {
        try {
            Path folder = Files.createTempDirectory(prefix);
            Process script = new ProcessBuilder(
                            "bash", Path.of("..", "tls", "make-certificates.sh").toString(), folder.toString())
                    .redirectErrorStream(true)
                    .start();
            String said = new String(script.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (script.waitFor() != 0) {
                throw new IllegalStateException("tls/make-certificates.sh failed: " + said);
            }
            return folder;
        } catch (IOException e) {
            throw new IllegalStateException("cannot make the test's certificates", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted making the test's certificates", e);
        }
    }
}
