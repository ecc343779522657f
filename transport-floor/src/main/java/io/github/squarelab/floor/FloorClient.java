package io.github.squarelab.floor;

import com.google.gson.Gson;
import com.google.gson.GsonBuilder;
import com.google.gson.JsonObject;
import io.github.squarelab.floor.grpc.GrpcStreamLoad;
import io.github.squarelab.floor.grpc.GrpcUnaryLoad;
import io.github.squarelab.floor.http.HttpLoad;
import io.github.squarelab.floor.measure.FloorFailure;
import io.github.squarelab.floor.measure.Latency;
import io.github.squarelab.floor.measure.Load;
import io.github.squarelab.floor.measure.Measurement;
import io.github.squarelab.floor.measure.Negotiated;
import io.github.squarelab.floor.measure.Run;
import java.io.PrintStream;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.time.Duration;
import java.util.Optional;

/** Drives one transport as hard as its window allows and describes the run as one JSON object. */
public final class FloorClient {

    /** No HTML escaping: the client's description has an apostrophe, which should read as one. */
    private static final Gson GSON = new GsonBuilder().disableHtmlEscaping().create();

    private final ClientSettings settings;
    private final PrintStream progress;
    /** Under TLS, what the load's handshake agreed on. */
    private Optional<Negotiated> negotiated = Optional.empty();

    /** @param progress where the phase lines go (stderr on the command line) */
    public FloorClient(ClientSettings settings, PrintStream progress) {
        this.settings = settings;
        this.progress = progress;
    }

    public Measurement run() throws FloorFailure, InterruptedException {
        try (Load load = newLoad()) {
            Measurement measurement = Run.measure(
                    load,
                    ClientSettings.FIRST_ANSWER_TIMEOUT,
                    settings.warmup(),
                    settings.duration(),
                    ClientSettings.DRAIN_TIMEOUT,
                    progress);
            negotiated = load.negotiated();
            if (settings.encrypted().isPresent() && negotiated.isEmpty()) {
                throw new FloorFailure(settings.transport().id() + ": under TLS, yet no connection made a handshake");
            }
            return measurement;
        }
    }

    /**
     * {@code {"transport":..., "settings":{...}, "calls":..., "seconds":..., "calls_per_second":...,
     * "latency_us":{"p50":..., "p90":..., "p99":..., "max":...}, "client_cpu_seconds":..., "answers_checked":...,
     * "unanswered_at_end":...}}
     */
    public String toJson(Measurement measurement) {
        Latency latency = measurement.latency();
        JsonObject latencyJson = new JsonObject();
        latencyJson.addProperty("p50", decimal(latency.p50Micros()));
        latencyJson.addProperty("p90", decimal(latency.p90Micros()));
        latencyJson.addProperty("p99", decimal(latency.p99Micros()));
        latencyJson.addProperty("max", decimal(latency.maxMicros()));
        JsonObject json = new JsonObject();
        json.addProperty("transport", settings.transport().id());
        json.add("settings", settingsJson());
        json.addProperty("calls", measurement.calls());
        json.addProperty("seconds", decimal(measurement.seconds()));
        json.addProperty("calls_per_second", decimal(measurement.callsPerSecond()));
        json.add("latency_us", latencyJson);
        json.addProperty("client_cpu_seconds", seconds(measurement.clientCpu()));
        json.addProperty("answers_checked", measurement.answersChecked());
        json.addProperty("unanswered_at_end", measurement.unansweredAtEnd());
        settings.encrypted().ifPresent(tls -> json.add("tls", tlsJson(tls)));
        return GSON.toJson(json);
    }

    /** {@code {"mode": "on"|"mtls", "provider", "protocol", "cipher", "alpn"}}, as the client's handshake agreed. */
    private JsonObject tlsJson(FloorTls tls) {
        JsonObject json = new JsonObject();
        json.addProperty("mode", tls.mode());
        negotiated.ifPresent(found -> {
            json.addProperty("provider", found.provider());
            json.addProperty("protocol", found.protocol());
            json.addProperty("cipher", found.cipher());
            json.addProperty("alpn", found.alpn());
        });
        return json;
    }

    private Load newLoad() {
        Optional<FloorTls> tls = settings.encrypted();
        return switch (settings.transport()) {
            case REST_UNARY -> new HttpLoad(settings.target(), settings.connections(), settings.deadline(), tls);
            case REST_H2C ->
                HttpLoad.h2c(settings.target(), settings.connections(), settings.streams(), settings.deadline(), tls);
            case GRPC_UNARY -> new GrpcUnaryLoad(settings.target(), settings.inFlight(), settings.deadline(), tls);
            case GRPC_STREAM ->
                new GrpcStreamLoad(
                        settings.target(), settings.streams(), settings.messagesPerStream(), settings.deadline(), tls);
            case GRPC_PINGPONG ->
                GrpcStreamLoad.pingPong(
                        settings.target(), settings.streams(), settings.messagesPerStream(), settings.deadline(), tls);
        };
    }

    /** Every setting that shaped the run, including the ones not on the command line. */
    private JsonObject settingsJson() {
        JsonObject json = new JsonObject();
        json.addProperty("target", settings.target());
        switch (settings.transport()) {
            case REST_UNARY -> {
                json.addProperty("in_flight", settings.connections());
                json.addProperty("connections", settings.connections());
                json.addProperty("call_deadline_s", seconds(settings.deadline()));
                json.addProperty("client", "netty " + HttpLoad.io() + ", HTTP/1.1 keep-alive, one call per connection");
            }
            case REST_H2C -> {
                json.addProperty("connections", settings.connections());
                json.addProperty("streams", settings.streams());
                json.addProperty("call_deadline_s", seconds(settings.deadline()));
                json.addProperty(
                        "client",
                        "netty " + HttpLoad.io()
                                + (settings.encrypted().isPresent()
                                        ? ", HTTP/2 agreed by ALPN over TLS"
                                        : ", HTTP/2 cleartext with prior knowledge")
                                + ", one stream per call, the streams spread evenly over the connections");
            }
            case GRPC_UNARY -> {
                json.addProperty("in_flight", settings.inFlight());
                json.addProperty("channels", 1);
                json.addProperty("call_deadline_s", seconds(settings.deadline()));
                json.addProperty("client", "grpc-java netty-shaded " + GrpcUnaryLoad.io() + ", direct executor");
            }
            case GRPC_STREAM -> {
                json.addProperty("streams", settings.streams());
                json.addProperty("messages_per_stream", settings.messagesPerStream());
                json.addProperty("channels", 1);
                json.addProperty("stream_deadline_s", seconds(settings.deadline()));
                json.addProperty(
                        "client",
                        "grpc-java netty-shaded " + GrpcStreamLoad.io()
                                + ", direct executor, isReady flow control, each slot's streams one after another");
            }
            case GRPC_PINGPONG -> {
                json.addProperty("streams", settings.streams());
                json.addProperty("messages_per_stream", settings.messagesPerStream());
                json.addProperty("channels", 1);
                json.addProperty("stream_deadline_s", seconds(settings.deadline()));
                json.addProperty(
                        "client",
                        "grpc-java netty-shaded " + GrpcStreamLoad.io()
                                + ", direct executor, one message in flight per stream (the next sent on its answer),"
                                + " each slot's streams one after another");
            }
        }
        json.addProperty("first_answer_timeout_s", seconds(ClientSettings.FIRST_ANSWER_TIMEOUT));
        json.addProperty("warmup_s", seconds(settings.warmup()));
        json.addProperty("duration_s", seconds(settings.duration()));
        json.addProperty("drain_timeout_s", seconds(ClientSettings.DRAIN_TIMEOUT));
        json.addProperty("numbers", "1.." + largestNumber());
        json.addProperty("java", Runtime.version().toString());
        json.addProperty("processors", Runtime.getRuntime().availableProcessors());
        return json;
    }

    /** Each stream starts again from 1, so a stream shorter than the cycle never asks for the larger numbers. */
    private int largestNumber() {
        return settings.transport() == Transport.GRPC_STREAM || settings.transport() == Transport.GRPC_PINGPONG
                ? Math.min(settings.messagesPerStream(), Squares.LARGEST_NUMBER)
                : Squares.LARGEST_NUMBER;
    }

    private static BigDecimal seconds(Duration duration) {
        return decimal(duration.toNanos() / 1e9);
    }

    /** Three decimal places at most, and none for a whole number: {@code 2000.5}, {@code 900}. */
    private static BigDecimal decimal(double value) {
        BigDecimal rounded =
                BigDecimal.valueOf(value).setScale(3, RoundingMode.HALF_UP).stripTrailingZeros();
        return rounded.scale() < 0 ? rounded.setScale(0) : rounded;
    }
}
