package io.github.squarelab.floor;

import io.github.squarelab.floor.grpc.GrpcStreamLoad;
import io.github.squarelab.floor.grpc.GrpcUnaryLoad;
import io.github.squarelab.floor.http.HttpLoad;
import io.github.squarelab.floor.measure.FloorFailure;
import io.github.squarelab.floor.measure.Latency;
import io.github.squarelab.floor.measure.Load;
import io.github.squarelab.floor.measure.Measurement;
import io.github.squarelab.floor.measure.Run;
import java.io.PrintStream;
import java.time.Duration;

/** Drives one transport as hard as its window allows and describes the run as one JSON object. */
public final class FloorClient {

    private final ClientSettings settings;
    private final PrintStream progress;

    /** @param progress where the phase lines go (stderr on the command line) */
    public FloorClient(ClientSettings settings, PrintStream progress) {
        this.settings = settings;
        this.progress = progress;
    }

    public Measurement run() throws FloorFailure, InterruptedException {
        try (Load load = newLoad()) {
            return Run.measure(load, ClientSettings.FIRST_ANSWER_TIMEOUT, settings.warmup(), settings.duration(),
                ClientSettings.DRAIN_TIMEOUT, progress);
        }
    }

    /**
     * {@code {"transport":..., "settings":{...}, "calls":..., "seconds":..., "calls_per_second":...,
     * "latency_us":{"p50":..., "p90":..., "p99":..., "max":...}, "client_cpu_seconds":..., "answers_checked":...,
     * "unanswered_at_end":...}}
     */
    public String toJson(Measurement measurement) {
        Latency latency = measurement.latency();
        return new Json()
            .field("transport", settings.transport().id())
            .field("settings", settingsJson())
            .field("calls", measurement.calls())
            .field("seconds", measurement.seconds())
            .field("calls_per_second", measurement.callsPerSecond())
            .field("latency_us", new Json()
                .field("p50", latency.p50Micros())
                .field("p90", latency.p90Micros())
                .field("p99", latency.p99Micros())
                .field("max", latency.maxMicros()))
            .field("client_cpu_seconds", seconds(measurement.clientCpu()))
            .field("answers_checked", measurement.answersChecked())
            .field("unanswered_at_end", measurement.unansweredAtEnd())
            .toString();
    }

    private Load newLoad() {
        return switch (settings.transport()) {
            case HTTP -> new HttpLoad(settings.target(), settings.httpConnections(), settings.deadline());
            case GRPC_UNARY -> new GrpcUnaryLoad(settings.target(), settings.inFlight(), settings.deadline());
            case GRPC_STREAM -> new GrpcStreamLoad(settings.target(), settings.streams(),
                settings.messagesPerStream(), settings.deadline());
        };
    }

    /** Every setting that shaped the run, including the ones not on the command line. */
    private Json settingsJson() {
        Json json = new Json().field("target", settings.target());
        switch (settings.transport()) {
            case HTTP -> json
                .field("in_flight", settings.httpConnections())
                .field("connections", settings.httpConnections())
                .field("call_deadline_s", seconds(settings.deadline()))
                .field("client", "netty " + HttpLoad.io() + ", HTTP/1.1 keep-alive, one call per connection");
            case GRPC_UNARY -> json
                .field("in_flight", settings.inFlight())
                .field("channels", 1)
                .field("call_deadline_s", seconds(settings.deadline()))
                .field("client", "grpc-java netty-shaded " + GrpcUnaryLoad.io() + ", direct executor");
            case GRPC_STREAM -> json
                .field("streams", settings.streams())
                .field("messages_per_stream", settings.messagesPerStream())
                .field("channels", 1)
                .field("stream_deadline_s", seconds(settings.deadline()))
                .field("client", "grpc-java netty-shaded " + GrpcStreamLoad.io()
                    + ", direct executor, isReady flow control, each slot's streams one after another");
        }
        return json
            .field("first_answer_timeout_s", seconds(ClientSettings.FIRST_ANSWER_TIMEOUT))
            .field("warmup_s", seconds(settings.warmup()))
            .field("duration_s", seconds(settings.duration()))
            .field("drain_timeout_s", seconds(ClientSettings.DRAIN_TIMEOUT))
            .field("numbers", "1.." + largestNumber())
            .field("java", Runtime.version().toString())
            .field("processors", Runtime.getRuntime().availableProcessors());
    }

    /** Each stream starts again from 1, so a stream shorter than the cycle never asks for the larger numbers. */
    private int largestNumber() {
        return settings.transport() == Transport.GRPC_STREAM
            ? Math.min(settings.messagesPerStream(), Squares.LARGEST_NUMBER) : Squares.LARGEST_NUMBER;
    }

    private static double seconds(Duration duration) {
        return duration.toNanos() / 1e9;
    }
}
