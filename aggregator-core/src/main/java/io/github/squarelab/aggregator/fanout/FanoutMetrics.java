package io.github.squarelab.aggregator.fanout;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.stereotype.Component;

/**
 * The aggregator's own metrics. Every series is registered up front, so dashboards show a zero rather
 * than nothing for a transport that has not been used yet, and the hot path never looks a meter up.
 *
 * <p>Every metric, with its Prometheus name, type and tags: docs/metrics.md.
 */
@Component
public class FanoutMetrics {

    private static final String SUCCESS = "success";
    private static final String ERROR = "error";

    private final Map<Transport, Meters> meters = new EnumMap<>(Transport.class);
    private final Counter streamMessagesSent;
    private final Counter streamMessagesReceived;

    public FanoutMetrics(MeterRegistry registry) {
        for (Transport transport : Transport.values()) {
            meters.put(transport, new Meters(registry, transport));
        }
        streamMessagesSent = streamMessages(registry, "sent");
        streamMessagesReceived = streamMessages(registry, "received");
    }

    /** Starts recording one request's fan-out. */
    public Recording start(Transport transport) {
        return new Recording(transport, meters.get(transport));
    }

    /** A request of this transport was shed before it started. */
    public void shed(Transport transport) {
        meters.get(transport).shed.increment();
    }

    private static Counter streamMessages(MeterRegistry registry, String direction) {
        return Counter.builder("aggregator.stream.messages")
                .description("Messages on the gRPC bidi streams to the square service")
                .tag("direction", direction)
                .register(registry);
    }

    /** One request's fan-out: a {@link CallRecorder} for its calls, and {@link #end} for the request. */
    public final class Recording implements CallRecorder {

        private final boolean stream;
        private final Meters meters;
        private final long startNanos = System.nanoTime();
        /** Calls may start on different threads (gRPC callbacks, Reactor Netty event loops). */
        private final AtomicInteger issued = new AtomicInteger();

        private Recording(Transport transport, Meters meters) {
            this.stream = transport == Transport.GRPC_STREAM || transport == Transport.GRPC_PINGPONG;
            this.meters = meters;
        }

        @Override
        public void started() {
            issued.incrementAndGet();
            meters.inFlight.incrementAndGet();
            if (stream) {
                streamMessagesSent.increment();
            }
        }

        @Override
        public void finished(long nanos, boolean success) {
            meters.inFlight.decrementAndGet();
            (success ? meters.callSuccess : meters.callError).record(nanos, TimeUnit.NANOSECONDS);
            if (stream && success) {
                streamMessagesReceived.increment();
            }
        }

        /** The request is over; {@code success} if it answered 200. */
        public void end(boolean success) {
            long nanos = System.nanoTime() - startNanos;
            (success ? meters.fanoutSuccess : meters.fanoutError).record(nanos, TimeUnit.NANOSECONDS);
            (success ? meters.callsSuccess : meters.callsError).increment(issued.get());
        }
    }

    /** The meters of one transport. */
    private static final class Meters {

        final Timer fanoutSuccess;
        final Timer fanoutError;
        final Counter callsSuccess;
        final Counter callsError;
        final Timer callSuccess;
        final Timer callError;
        final Counter shed;
        final AtomicInteger inFlight = new AtomicInteger();

        Meters(MeterRegistry registry, Transport transport) {
            shed = Counter.builder("aggregator.admission.shed")
                    .description("Requests shed with 503 and Retry-After because they did not fit the admission budget"
                            + " or could not be expected to finish within the deadline")
                    .tag("transport", transport.tag())
                    .register(registry);
            fanoutSuccess = fanout(registry, transport, SUCCESS);
            fanoutError = fanout(registry, transport, ERROR);
            callsSuccess = calls(registry, transport, SUCCESS);
            callsError = calls(registry, transport, ERROR);
            callSuccess = latency(registry, transport, SUCCESS);
            callError = latency(registry, transport, ERROR);
            Gauge.builder("aggregator.downstream.inflight", inFlight, AtomicInteger::get)
                    .description("Downstream calls or stream messages sent and not answered yet")
                    .tag("transport", transport.tag())
                    .register(registry);
        }

        private static Timer fanout(MeterRegistry registry, Transport transport, String outcome) {
            return Timer.builder("aggregator.fanout")
                    .description("One aggregator request: all of its n downstream squares")
                    .tags("transport", transport.tag(), "outcome", outcome)
                    .publishPercentileHistogram()
                    .minimumExpectedValue(Duration.ofMillis(1))
                    .maximumExpectedValue(Duration.ofSeconds(60))
                    .register(registry);
        }

        private static Counter calls(MeterRegistry registry, Transport transport, String outcome) {
            return Counter.builder("aggregator.downstream.calls")
                    .description("Squares requested from the square service, one per call or stream message")
                    .tags("transport", transport.tag(), "outcome", outcome)
                    .register(registry);
        }

        private static Timer latency(MeterRegistry registry, Transport transport, String outcome) {
            return Timer.builder("aggregator.downstream.latency")
                    .description("One downstream call, or one stream message from send to answer, seen by the client")
                    .tags("transport", transport.tag(), "outcome", outcome)
                    .publishPercentileHistogram()
                    // Loopback calls take tens of microseconds; the default histogram starts at 1 ms.
                    .minimumExpectedValue(Duration.ofNanos(20_000))
                    .maximumExpectedValue(Duration.ofSeconds(30))
                    .register(registry);
        }
    }
}
