package io.github.squarelab.floor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.github.squarelab.floor.grpc.GrpcSquareServer;
import io.github.squarelab.floor.http.HttpSquareServer;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The command line: what it prints and how it exits. */
class TransportFloorTests {

    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();
    private PrintStream originalOut;
    private PrintStream originalErr;

    @BeforeEach
    void captureOutput() {
        originalOut = System.out;
        originalErr = System.err;
        System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
        System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
    }

    @AfterEach
    void restoreOutput() {
        System.setOut(originalOut);
        System.setErr(originalErr);
    }

    @Test
    void aClientRunPrintsOneJsonObjectOnStdoutAndExitsZero() throws Exception {
        try (SquareServer server = new HttpSquareServer("127.0.0.1", 0, Squares::square)) {
            int status = TransportFloor.run(List.of("client", "rest_unary", "--target", "127.0.0.1:" + server.port(),
                "--connections", "2", "--warmup", "200ms", "--duration", "500ms"));

            assertThat(status).isZero();
            assertThat(out.toString(StandardCharsets.UTF_8).lines()).hasSize(1);
            JsonObject json = JsonParser.parseString(out.toString(StandardCharsets.UTF_8)).getAsJsonObject();
            assertThat(json.get("transport").getAsString()).isEqualTo("rest_unary");
            assertThat(json.getAsJsonObject("settings").get("connections").getAsInt()).isEqualTo(2);
            assertThat(json.get("calls").getAsLong()).isPositive();
        }
    }

    @Test
    void aWrongAnswerExitsOneWithTheReasonOnStderrAndNothingOnStdout() throws Exception {
        try (SquareServer server = new GrpcSquareServer("127.0.0.1", 0, ShortRuns::wrongSquare)) {
            int status = TransportFloor.run(List.of("client", "grpc_unary", "--target", "127.0.0.1:" + server.port(),
                "--in-flight", "4", "--warmup", "200ms", "--duration", "500ms"));

            assertThat(status).isEqualTo(1);
            assertThat(out.toString(StandardCharsets.UTF_8)).isEmpty();
            assertThat(err.toString(StandardCharsets.UTF_8)).contains("floor: FAILED: grpc_unary answered number");
        }
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "client udp --target 127.0.0.1:1 | unknown transport udp",
        "client grpc-unary --target 127.0.0.1:1 | unknown transport grpc-unary",
        "client rest_unary | --target is required",
        "client rest_unary --target 127.0.0.1:1 --window 3 | unknown option --window",
        "client rest_unary --target 127.0.0.1:1 --duration soon | --duration must be a duration",
        "client rest_unary --target 127.0.0.1:1 --connections 0 | connections must be at least 1",
        "client grpc_stream --target 127.0.0.1:1 --messages 0 | messages must be at least 1",
        "server ftp | unknown server ftp",
        "serve grpc | expected 'server' or 'client'"})
    void aUsageErrorExitsTwoWithTheReasonAndTheUsage(String args, String reason) throws Exception {
        int status = TransportFloor.run(List.of(args.split(" ")));

        assertThat(status).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains(reason).contains("usage:");
    }

    @Test
    void defaultsAreTheLabsDefaultLoad() {
        ClientSettings settings = TransportFloor.clientSettings("grpc_stream",
            Arguments.parse(List.of("--target", "127.0.0.1:1"), java.util.Set.of("target")));

        assertThat(settings).isEqualTo(new ClientSettings(Transport.GRPC_STREAM, "127.0.0.1:1", 800, 100, 1000, 64,
            Duration.ofSeconds(10), Duration.ofSeconds(10)));
    }

    @ParameterizedTest
    @CsvSource({"500ms, 500", "3s, 3000", "1.5s, 1500", "2m, 120000", "10, 10000"})
    void durationsTakeMillisecondsSecondsOrMinutes(String text, long millis) {
        assertThat(Arguments.parseDuration("--duration", text)).isEqualTo(Duration.ofMillis(millis));
    }

    @Test
    void anOptionGivenTwiceIsAnError() {
        assertThatThrownBy(() -> Arguments.parse(List.of("--port", "1", "--port", "2"), java.util.Set.of("port")))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessage("--port given twice");
    }
}
