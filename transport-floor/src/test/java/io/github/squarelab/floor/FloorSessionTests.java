package io.github.squarelab.floor;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.github.squarelab.floor.grpc.GrpcSquareServer;
import io.github.squarelab.floor.http.HttpSquareServer;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Many client runs in one JVM, one a line, as the lab measures the floor in parts that take turns. */
class FloorSessionTests {

    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    @Test
    void eachLineIsOneRunWhoseJsonObjectIsOneLineAndABadLineIsAnErrorThatEndsNothing() throws Exception {
        try (SquareServer grpc = new GrpcSquareServer("127.0.0.1", 0, Squares::square);
                SquareServer http = new HttpSquareServer("127.0.0.1", 0, Squares::square)) {
            String input = String.join(
                    "\n",
                    run("grpc_unary", grpc, "--in-flight", "4"),
                    "not json",
                    run("grpc_stream", grpc, "--streams", "2"),
                    "",
                    run("rest_unary", http, "--connections", "2"),
                    run("grpc_unary", grpc, "--in-flight", "4"));

            serve(input);

            List<String> lines = out.toString(StandardCharsets.UTF_8).lines().toList();
            assertThat(lines).hasSize(5);
            assertMeasured(lines.get(0), "grpc_unary");
            assertThat(error(lines.get(1))).isEqualTo("a line must be a JSON array of strings, not: not json");
            assertThat(error(lines.get(2))).isEqualTo("usage: --messages is required");
            assertMeasured(lines.get(3), "rest_unary");
            assertMeasured(lines.get(4), "grpc_unary");
            String progress = err.toString(StandardCharsets.UTF_8);
            assertThat(progress.lines().filter(line -> line.startsWith("floor: measuring")))
                    .hasSize(3);
            assertThat(progress.lines().filter(line -> line.startsWith("floor: measured")))
                    .hasSize(3);
        }
    }

    @Test
    void aRunThatFailsIsAnErrorLineAndTheNextRunStillRuns() throws Exception {
        try (SquareServer grpc = new GrpcSquareServer("127.0.0.1", 0, number -> Squares.square(number) + 1)) {
            serve(run("grpc_unary", grpc, "--in-flight", "2") + "\n" + run("grpc_unary", grpc, "--in-flight", "2"));

            List<String> lines = out.toString(StandardCharsets.UTF_8).lines().toList();
            assertThat(lines).hasSize(2);
            assertThat(error(lines.get(0))).startsWith("grpc_unary answered number 1 with 2 when asked for 1 (1)");
            assertThat(error(lines.get(1))).startsWith("grpc_unary answered number");
            assertThat(err.toString(StandardCharsets.UTF_8)).contains("floor: FAILED: grpc_unary answered");
        }
    }

    private void serve(String input) throws InterruptedException {
        new FloorSession(
                        new ByteArrayInputStream(input.getBytes(StandardCharsets.UTF_8)),
                        new PrintStream(out, true, StandardCharsets.UTF_8),
                        new PrintStream(err, true, StandardCharsets.UTF_8))
                .serve();
    }

    private static String run(String transport, SquareServer server, String... load) {
        StringBuilder line =
                new StringBuilder("[\"" + transport + "\", \"--target\", \"127.0.0.1:" + server.port() + "\"");
        for (String word : load) {
            line.append(", \"").append(word).append('"');
        }
        return line.append(", \"--warmup\", \"0.2\", \"--duration\", \"0.3\"]").toString();
    }

    private static void assertMeasured(String line, String transport) {
        JsonObject json = JsonParser.parseString(line).getAsJsonObject();
        assertThat(json.has("error")).as(line).isFalse();
        assertThat(json.get("transport").getAsString()).isEqualTo(transport);
        assertThat(json.get("calls").getAsLong()).isPositive();
    }

    private static String error(String line) {
        return JsonParser.parseString(line).getAsJsonObject().get("error").getAsString();
    }
}
