package io.github.squarelab.floor;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.github.squarelab.floor.measure.Latency;
import io.github.squarelab.floor.measure.Measurement;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;

/** The one JSON object a client run prints: the shape the lab reads. */
class FloorClientTests {

    private static final Measurement MEASUREMENT = new Measurement(
            25_000,
            Duration.ofMillis(2_500),
            new Latency(150.2504, 900, 2_000.5, 12_345.6785),
            Duration.ofMillis(1_750),
            31_000,
            0);

    @Test
    void describesTheRunWithItsResultsAndEverySettingUsed() throws Exception {
        ClientSettings settings = new ClientSettings(
                Transport.GRPC_UNARY, "127.0.0.1:6000", 3200, 0, 0, 0, Duration.ofSeconds(3), Duration.ofSeconds(10));

        String text = ShortRuns.client(settings).toJson(MEASUREMENT);
        JsonObject json = JsonParser.parseString(text).getAsJsonObject();

        assertThat(json.get("transport").getAsString()).isEqualTo("grpc_unary");
        assertThat(json.get("calls").getAsLong()).isEqualTo(25_000);
        assertThat(json.get("seconds").getAsDouble()).isEqualTo(2.5);
        // Decimals rounded to three places, whole numbers written whole.
        assertThat(text).contains("\"calls_per_second\":10000,");
        assertThat(json.get("latency_us").toString())
                .isEqualTo("{\"p50\":150.25,\"p90\":900,\"p99\":2000.5,\"max\":12345.679}");
        assertThat(json.get("client_cpu_seconds").getAsDouble()).isEqualTo(1.75);
        assertThat(json.get("answers_checked").getAsLong()).isEqualTo(31_000);
        assertThat(json.get("unanswered_at_end").getAsLong()).isZero();
        JsonObject used = json.getAsJsonObject("settings");
        assertThat(used.get("target").getAsString()).isEqualTo("127.0.0.1:6000");
        assertThat(used.get("in_flight").getAsInt()).isEqualTo(3200);
        assertThat(used.get("channels").getAsInt()).isEqualTo(1);
        assertThat(used.get("call_deadline_s").getAsDouble()).isEqualTo(30 + 3 + 10 + 2 * 10.0);
        assertThat(used.get("first_answer_timeout_s").getAsDouble()).isEqualTo(30.0);
        assertThat(used.get("drain_timeout_s").getAsDouble()).isEqualTo(10.0);
        assertThat(used.get("warmup_s").getAsDouble()).isEqualTo(3.0);
        assertThat(used.get("duration_s").getAsDouble()).isEqualTo(10.0);
        assertThat(used.get("numbers").getAsString()).isEqualTo("1..1000");
    }

    @ParameterizedTest
    @CsvSource({
        "GRPC_STREAM, 250, 1..250, isReady flow control",
        "GRPC_STREAM, 1000, 1..1000, isReady flow control",
        "GRPC_STREAM, 1500, 1..1000, isReady flow control",
        "GRPC_PINGPONG, 250, 1..250, one message in flight per stream",
        "GRPC_PINGPONG, 1500, 1..1000, one message in flight per stream"
    })
    void aStreamRunSaysHowManyMessagesEachStreamSendsAndWhichNumbers(
            Transport transport, int messagesPerStream, String numbers, String sending) throws Exception {
        ClientSettings settings = new ClientSettings(
                transport,
                "127.0.0.1:6000",
                0,
                100,
                messagesPerStream,
                0,
                Duration.ofSeconds(3),
                Duration.ofSeconds(10));

        String text = ShortRuns.client(settings).toJson(MEASUREMENT);
        JsonObject used = JsonParser.parseString(text).getAsJsonObject().getAsJsonObject("settings");

        assertThat(used.get("streams").getAsInt()).isEqualTo(100);
        assertThat(used.get("messages_per_stream").getAsInt()).isEqualTo(messagesPerStream);
        assertThat(used.get("numbers").getAsString()).isEqualTo(numbers);
        assertThat(used.get("stream_deadline_s").getAsDouble()).isEqualTo(30 + 3 + 10 + 2 * 10.0);
        assertThat(used.get("channels").getAsInt()).isEqualTo(1);
        assertThat(used.has("in_flight")).isFalse();
        assertThat(used.get("client").getAsString())
                .contains(sending)
                .contains("each slot's streams one after another");
    }

    @Test
    void aRestH2cRunSaysItsConnectionsAndStreams() {
        ClientSettings settings = new ClientSettings(
                Transport.REST_H2C, "127.0.0.1:6000", 0, 800, 0, 8, Duration.ofSeconds(3), Duration.ofSeconds(10));

        JsonObject json = JsonParser.parseString(ShortRuns.client(settings).toJson(MEASUREMENT))
                .getAsJsonObject();
        JsonObject used = json.getAsJsonObject("settings");

        assertThat(json.get("transport").getAsString()).isEqualTo("rest_h2c");
        assertThat(used.get("connections").getAsInt()).isEqualTo(8);
        assertThat(used.get("streams").getAsInt()).isEqualTo(800);
        assertThat(used.has("in_flight")).isFalse();
        assertThat(used.get("call_deadline_s").getAsDouble()).isEqualTo(30 + 3 + 10 + 2 * 10.0);
        assertThat(used.get("numbers").getAsString()).isEqualTo("1..1000");
        assertThat(used.get("client").getAsString()).contains("HTTP/2 cleartext with prior knowledge");
    }

    @Test
    void aRestUnaryRunHasAsManyCallsInFlightAsConnections() {
        ClientSettings settings = new ClientSettings(
                Transport.REST_UNARY, "127.0.0.1:6000", 0, 0, 0, 64, Duration.ofSeconds(3), Duration.ofSeconds(10));

        JsonObject used = JsonParser.parseString(ShortRuns.client(settings).toJson(MEASUREMENT))
                .getAsJsonObject()
                .getAsJsonObject("settings");

        assertThat(used.get("connections").getAsInt()).isEqualTo(64);
        assertThat(used.get("in_flight").getAsInt()).isEqualTo(64);
        assertThat(used.get("call_deadline_s").getAsDouble()).isEqualTo(30 + 3 + 10 + 2 * 10.0);
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void everyTransportHasTheSameTopLevelFields(Transport transport) throws Exception {
        ClientSettings settings = ShortRuns.settings(transport, 6000, 4);

        JsonObject json = JsonParser.parseString(ShortRuns.client(settings).toJson(MEASUREMENT))
                .getAsJsonObject();

        assertThat(json.keySet())
                .containsExactly(
                        "transport",
                        "settings",
                        "calls",
                        "seconds",
                        "calls_per_second",
                        "latency_us",
                        "client_cpu_seconds",
                        "answers_checked",
                        "unanswered_at_end");
        assertThat(json.getAsJsonObject("settings").keySet())
                .contains(
                        "target",
                        "first_answer_timeout_s",
                        "warmup_s",
                        "duration_s",
                        "drain_timeout_s",
                        "numbers",
                        "client",
                        "java",
                        "processors")
                .containsAnyElementsOf(List.of("in_flight", "streams"));
    }
}
