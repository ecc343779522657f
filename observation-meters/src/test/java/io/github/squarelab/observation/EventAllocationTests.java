package io.github.squarelab.observation;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.management.ThreadMXBean;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.observation.DefaultMeterObservationHandler;
import io.micrometer.core.instrument.observation.MeterObservationHandler;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.lang.management.ManagementFactory;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/**
 * What one message of a stream costs the handler, in bytes allocated on the calling thread: the stream's counters are
 * found once, and every further message counts into them without building anything. Micrometer's handler, measured the
 * same way, shows what the measurement sees when something is built per message.
 */
class EventAllocationTests {

    private static final int MESSAGES = 5_000;

    @Test
    void aMessageOfAStreamInFlightAllocatesNothingBeyondWhatTheObservationItselfDoes() {
        long observation = bytesPerMessage(registry -> new Empty());

        assertThat(bytesPerMessage(registry -> new CachedMeterObservationHandler(registry, true)) - observation)
                .isLessThan(8);
    }

    @Test
    void micrometersHandlerAllocatesForEveryMessage() {
        long observation = bytesPerMessage(registry -> new Empty());

        assertThat(bytesPerMessage(DefaultMeterObservationHandler::new) - observation)
                .isGreaterThan(200);
    }

    /** A received and a sent event, as gRPC's observation signals each message, on a stream tagged as gRPC tags it. */
    private static long bytesPerMessage(Function<MeterRegistry, MeterObservationHandler<Observation.Context>> handler) {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        ObservationRegistry observations = ObservationRegistry.create();
        MeterObservationHandler<Observation.Context> measured = handler.apply(registry);
        observations.observationConfig().observationHandler(measured);
        Observation stream = Observation.createNotStarted("grpc.server", observations)
                .lowCardinalityKeyValue("rpc.service", "vinsmath.SquareRpc")
                .lowCardinalityKeyValue("rpc.method", "findSquareBiStream")
                .lowCardinalityKeyValue("rpc.type", "BIDI_STREAMING")
                .lowCardinalityKeyValue("grpc.status_code", "UNKNOWN")
                .start();
        Observation.Event received = Observation.Event.of("received");
        Observation.Event sent = Observation.Event.of("sent");
        for (int i = 0; i < MESSAGES; i++) {
            stream.event(received);
            stream.event(sent);
        }
        ThreadMXBean threads = (ThreadMXBean) ManagementFactory.getThreadMXBean();
        long before = threads.getCurrentThreadAllocatedBytes();
        for (int i = 0; i < MESSAGES; i++) {
            stream.event(received);
            stream.event(sent);
        }
        long perMessage = (threads.getCurrentThreadAllocatedBytes() - before) / MESSAGES;
        stream.stop();
        if (!(measured instanceof Empty)) {
            assertThat(registry.get("grpc.server.received").counter().count()).isEqualTo(2 * MESSAGES);
        }
        return perMessage;
    }

    /** Micrometer's observation without a meter: what every message costs whatever the handler. */
    private static final class Empty implements MeterObservationHandler<Observation.Context> {}
}
