package io.github.squarelab.square.grpc.metering;

import io.grpc.Status;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * The gRPC A66 metrics of one method, as net.devh's stream tracer names, describes, buckets and tags them
 * (grpc.server.call.*, tagged with the library's name and version): the calls started, and each call's duration and
 * wire bytes each way, by status.
 */
final class A66Meters {

    /**
     * The library net.devh 3.1.0's stream tracer names in every series (its Constants.LIBRARY_NAME and VERSION), kept
     * on both Spring generations: they are tags of the contract's metrics, not a claim about who records them.
     */
    static final String INSTRUMENTATION_SOURCE = "grpc-spring";

    static final String INSTRUMENTATION_VERSION = "v3.1.0.RELEASE";

    /** net.devh 3.1.0's buckets (MetricsServerInstruments), kept so dashboards built on them still line up. */
    private static final Duration[] LATENCY_BUCKETS = {
        Duration.ofNanos(10_000),
        Duration.ofNanos(50_000),
        Duration.ofNanos(100_000),
        Duration.ofNanos(300_000),
        Duration.ofNanos(600_000),
        Duration.ofNanos(800_000),
        Duration.ofMillis(1),
        Duration.ofMillis(2),
        Duration.ofMillis(3),
        Duration.ofMillis(4),
        Duration.ofMillis(5),
        Duration.ofMillis(6),
        Duration.ofMillis(8),
        Duration.ofMillis(10),
        Duration.ofMillis(13),
        Duration.ofMillis(16),
        Duration.ofMillis(20),
        Duration.ofMillis(25),
        Duration.ofMillis(30),
        Duration.ofMillis(40),
        Duration.ofMillis(50),
        Duration.ofMillis(65),
        Duration.ofMillis(80),
        Duration.ofMillis(100),
        Duration.ofMillis(130),
        Duration.ofMillis(160),
        Duration.ofMillis(200),
        Duration.ofMillis(250),
        Duration.ofMillis(300),
        Duration.ofMillis(400),
        Duration.ofMillis(500),
        Duration.ofMillis(650),
        Duration.ofMillis(800),
        Duration.ofSeconds(1),
        Duration.ofSeconds(2),
        Duration.ofSeconds(5),
        Duration.ofSeconds(10),
        Duration.ofSeconds(20),
        Duration.ofSeconds(50),
        Duration.ofSeconds(100)
    };

    private static final double[] SIZE_BUCKETS = {
        1024, 2048, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864, 268435456, 1073741824, 4294967296d
    };

    private final LazyMeter<Counter> started;
    private final ByStatus<Ended> ended;

    A66Meters(MeterRegistry registry, String fullMethodName) {
        Tags method = Tags.of(
                "grpc.method", fullMethodName,
                "instrumentation_source", INSTRUMENTATION_SOURCE,
                "instrumentation_version", INSTRUMENTATION_VERSION);
        this.started = new LazyMeter<>(() -> Counter.builder("grpc.server.call.started")
                .description("The total number of RPC attempts started from the server side, including those that "
                        + "have not completed.")
                .tags(method)
                .register(registry));
        this.ended = new ByStatus<>(code -> new Ended(registry, method.and("grpc.status", code.toString())));
    }

    void started() {
        started.get().increment();
    }

    void ended(Status.Code code, long nanos, long bytesSent, long bytesReceived) {
        Ended meters = ended.get(code);
        meters.duration.record(nanos, TimeUnit.NANOSECONDS);
        meters.sent.record(bytesSent);
        meters.received.record(bytesReceived);
    }

    /** The meters of the calls of this method that ended with one status. */
    private static final class Ended {
        final Timer duration;
        final DistributionSummary sent;
        final DistributionSummary received;

        Ended(MeterRegistry registry, Tags tags) {
            duration = Timer.builder("grpc.server.call.duration")
                    .description("Time taken to complete a call from server transport's perspective")
                    .serviceLevelObjectives(LATENCY_BUCKETS)
                    .tags(tags)
                    .register(registry);
            sent = bytes("grpc.server.call.sent_total_compressed_message_size", "sent", tags, registry);
            received = bytes("grpc.server.call.rcvd_total_compressed_message_size", "received", tags, registry);
        }

        private static DistributionSummary bytes(String name, String way, Tags tags, MeterRegistry registry) {
            return DistributionSummary.builder(name)
                    .description("Compressed message bytes " + way + " per server call")
                    .baseUnit("bytes")
                    .serviceLevelObjectives(SIZE_BUCKETS)
                    .tags(tags)
                    .register(registry);
        }
    }
}
