package io.github.squarelab.floor;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.github.squarelab.floor.grpc.GrpcSquareServer;
import io.github.squarelab.floor.http.HttpSquareServer;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
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

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "http | rest_unary --connections 2 | {'connections': 2}",
                "http | rest_h2c --connections 2 --streams 8 | {'connections': 2, 'streams': 8}",
                "grpc | grpc_pingpong --streams 2 --messages 5 | {'streams': 2, 'messages_per_stream': 5}"
            })
    void aClientRunPrintsOneJsonObjectOnStdoutAndExitsZero(String server, String transportAndLoad, String load)
            throws Exception {
        try (SquareServer running = server.equals("http")
                ? new HttpSquareServer("127.0.0.1", 0, Squares::square)
                : new GrpcSquareServer("127.0.0.1", 0, Squares::square)) {
            List<String> args = new ArrayList<>(List.of("client"));
            args.addAll(List.of(transportAndLoad.split(" ")));
            args.addAll(List.of("--target", "127.0.0.1:" + running.port(), "--warmup", "0.2", "--duration", "0.5"));

            int status = TransportFloor.run(args);

            assertThat(status).isZero();
            assertThat(out.toString(StandardCharsets.UTF_8).lines()).hasSize(1);
            JsonObject json =
                    JsonParser.parseString(out.toString(StandardCharsets.UTF_8)).getAsJsonObject();
            assertThat(json.get("transport").getAsString()).isEqualTo(args.get(1));
            JsonObject settings = json.getAsJsonObject("settings");
            JsonParser.parseString(load).getAsJsonObject().entrySet().forEach(given -> assertThat(
                            settings.get(given.getKey()))
                    .as(given.getKey())
                    .isEqualTo(given.getValue()));
            assertThat(json.get("calls").getAsLong()).isPositive();
            assertThat(json.get("answers_checked").getAsLong())
                    .isGreaterThan(json.get("calls").getAsLong());
            assertThat(json.get("unanswered_at_end").getAsLong()).isZero();
        }
    }

    @Test
    void aWrongAnswerExitsOneWithTheReasonOnStderrAndNothingOnStdout() throws Exception {
        try (SquareServer server = new GrpcSquareServer("127.0.0.1", 0, ShortRuns::wrongSquare)) {
            int status = TransportFloor.run(List.of(
                    "client",
                    "grpc_unary",
                    "--target",
                    "127.0.0.1:" + server.port(),
                    "--in-flight",
                    "4",
                    "--warmup",
                    "0.2",
                    "--duration",
                    "0.5"));

            assertThat(status).isEqualTo(1);
            assertThat(out.toString(StandardCharsets.UTF_8)).isEmpty();
            assertThat(err.toString(StandardCharsets.UTF_8)).contains("floor: FAILED: grpc_unary answered number");
        }
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "client udp --target h:1 | unknown transport udp; expected one of rest_unary, rest_h2c, grpc_unary, "
                        + "grpc_stream, grpc_pingpong",
                "client grpc-unary --target h:1 --in-flight 8 --warmup 1 --duration 1 | unknown transport grpc-unary",
                "client rest_unary | --target is required",
                "client rest_unary --target h:1 --warmup 1 --duration 1 | --connections is required",
                "client grpc_unary --target h:1 --warmup 1 --duration 1 | --in-flight is required",
                "client grpc_stream --target h:1 --streams 2 --warmup 1 --duration 1 | --messages is required",
                "client grpc_stream --target h:1 --messages 2 --warmup 1 --duration 1 | --streams is required",
                "client rest_unary --target h:1 --connections 2 --duration 1 | --warmup is required",
                "client rest_unary --target h:1 --connections 2 --warmup 1 | --duration is required",
                "client rest_unary --target h:1 --connections 2 --in-flight 8 --warmup 1 --duration 1 "
                        + "| the rest_unary client takes no --in-flight",
                "client grpc_unary --target h:1 --in-flight 8 --connections 2 --warmup 1 --duration 1 "
                        + "| the grpc_unary client takes no --connections",
                "client grpc_stream --target h:1 --streams 2 --messages 9 --in-flight 8 --warmup 1 --duration 1 "
                        + "| the grpc_stream client takes no --in-flight",
                "client rest_h2c --target h:1 --streams 8 --warmup 1 --duration 1 | --connections is required",
                "client rest_h2c --target h:1 --connections 2 --warmup 1 --duration 1 | --streams is required",
                "client rest_h2c --target h:1 --connections 2 --streams 0 --warmup 1 --duration 1 "
                        + "| --streams must be at least 1, not 0",
                "client rest_h2c --target h:1 --connections 2 --streams 8 --in-flight 8 --warmup 1 --duration 1 "
                        + "| the rest_h2c client takes no --in-flight",
                "client rest_h2c --target h:1 --connections 2 --streams 8 --messages 9 --warmup 1 --duration 1 "
                        + "| the rest_h2c client takes no --messages",
                "client rest_unary --target h:1 --connections 2 --streams 8 --warmup 1 --duration 1 "
                        + "| the rest_unary client takes no --streams",
                "client grpc_pingpong --target h:1 --messages 9 --warmup 1 --duration 1 | --streams is required",
                "client grpc_pingpong --target h:1 --streams 2 --warmup 1 --duration 1 | --messages is required",
                "client grpc_pingpong --target h:1 --streams 2 --messages 9 --connections 2 --warmup 1 --duration 1 "
                        + "| the grpc_pingpong client takes no --connections",
                "client grpc_pingpong --target h:1 --streams 2 --messages 9 --duration 1 | --warmup is required",
                "client rest_unary --target h:1 --connections 2 --window 3 --warmup 1 --duration 1 "
                        + "| the rest_unary client takes no --window",
                "client rest_unary --target h:1 --connections 2 --warmup 1 --duration 10s "
                        + "| --duration must be seconds, such as 10 or 0.5, not 10s",
                "client rest_unary --target h:1 --connections 2 --warmup 500ms --duration 1 | --warmup must be seconds",
                "client rest_unary --target h:1 --connections 2 --warmup -1 --duration 1 | --warmup must be seconds",
                "client rest_unary --target h:1 --connections 2 --warmup 1 --duration 0 | --duration must be more than 0",
                "client rest_unary --target h:1 --connections 0 --warmup 1 --duration 1 | --connections must be at least 1",
                "client grpc_stream --target h:1 --streams 2 --messages 0 --warmup 1 --duration 1 "
                        + "| --messages must be at least 1",
                "client grpc_unary --target h:1 --in-flight eight --warmup 1 --duration 1 "
                        + "| --in-flight must be a whole number, not eight",
                "client rest_unary --target h:1 --target h:2 | --target given twice",
                "client rest_unary target h:1 | expected an option such as --target, not target",
                "server ftp | unknown server ftp",
                "server grpc --target h:1 | the grpc server takes no --target",
                "serve grpc | expected 'server' or 'client'"
            })
    void aUsageErrorExitsTwoWithTheReasonAndTheUsage(String args, String reason) throws Exception {
        int status = TransportFloor.run(List.of(args.split(" ")));

        assertThat(status).isEqualTo(2);
        assertThat(out.toString(StandardCharsets.UTF_8)).isEmpty();
        assertThat(err.toString(StandardCharsets.UTF_8))
                .contains("transport-floor: " + reason)
                .contains("usage:");
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "rest_unary --connections 64 | 0 | 0 | 0 | 64",
                "grpc_unary --in-flight 800 | 800 | 0 | 0 | 0",
                "grpc_stream --streams 100 --messages 1000 | 0 | 100 | 1000 | 0",
                "rest_h2c --connections 8 --streams 800 | 0 | 800 | 0 | 8",
                "rest_h2c --streams 800 --connections 8 | 0 | 800 | 0 | 8",
                "grpc_pingpong --streams 100 --messages 1000 | 0 | 100 | 1000 | 0"
            })
    void eachTransportTakesItsOwnLoadOptions(
            String transportAndLoad, int inFlight, int streams, int messages, int connections) {
        List<String> args = new ArrayList<>(List.of(transportAndLoad.split(" ")));
        args.addAll(List.of("--target", "127.0.0.1:1", "--warmup", "10", "--duration", "0.5"));

        ClientSettings settings =
                TransportFloor.clientSettings(args.get(0), Arguments.parse(args.subList(1, args.size())));

        assertThat(settings)
                .isEqualTo(new ClientSettings(
                        Transport.byId(args.get(0)).orElseThrow(),
                        "127.0.0.1:1",
                        inFlight,
                        streams,
                        messages,
                        connections,
                        Duration.ofSeconds(10),
                        Duration.ofMillis(500)));
    }

    @ParameterizedTest
    @CsvSource({"10, 10000000000", "0.5, 500000000", "2, 2000000000", "1.25, 1250000000", "0, 0", "0.0000000015, 2"})
    void secondsAreADecimalNumber(String text, long nanos) {
        assertThat(Arguments.parse(List.of("--warmup", text)).seconds("warmup")).isEqualTo(Duration.ofNanos(nanos));
    }
}
