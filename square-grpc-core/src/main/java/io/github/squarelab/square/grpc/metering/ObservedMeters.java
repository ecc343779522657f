package io.github.squarelab.square.grpc.metering;

import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.LongTaskTimer;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * The meters Micrometer's gRPC server observation gives one method through Spring Boot's meter observation handler
 * (grpc.server, grpc.server.active, and a counter per event: received, sent, cancelled), with the same names, kinds and
 * tags: the observation's low-cardinality key values, grpc.status_code UNKNOWN until the call is closed, and the timer's
 * error tag.
 */
final class ObservedMeters {

    /** Far above the exception types a service's calls end with; past it, such timers are looked up per call. */
    private static final int MAX_ERROR_TIMERS = 64;

    private static final String UNKNOWN = Status.Code.UNKNOWN.name();

    private final MeterRegistry registry;
    private final Tags method;
    private final LazyMeter<LongTaskTimer> active;
    private final LazyMeter<Counter> received;
    private final LazyMeter<Counter> sent;
    private final LazyMeter<Counter> cancelled;
    private final ByStatus<Timer> ended;
    private final ConcurrentHashMap<String, Timer> endedWithError = new ConcurrentHashMap<>();

    /** {@code longTaskTimers} false leaves grpc.server.active out, as Spring Boot's property does for observations. */
    ObservedMeters(MeterRegistry registry, MethodDescriptor<?, ?> descriptor, boolean longTaskTimers) {
        this.registry = registry;
        this.method = Tags.of(
                "rpc.method", descriptor.getBareMethodName(),
                "rpc.service", descriptor.getServiceName(),
                "rpc.type", descriptor.getType().name());
        Tags unknown = status(UNKNOWN);
        this.active = longTaskTimers
                ? new LazyMeter<>(() -> LongTaskTimer.builder("grpc.server.active")
                        .tags(unknown)
                        .register(registry))
                : null;
        this.received = new LazyMeter<>(() -> event("received", unknown));
        this.sent = new LazyMeter<>(() -> event("sent", unknown));
        this.cancelled = new LazyMeter<>(() -> event("cancelled", unknown));
        this.ended = new ByStatus<>(code -> timer(code.name(), "none"));
    }

    /** The call's sample of grpc.server.active, or null when long task timers are off. */
    LongTaskTimer.Sample started() {
        return active != null ? active.get().start() : null;
    }

    void received() {
        received.get().increment();
    }

    void sent() {
        sent.get().increment();
    }

    /**
     * Tagged as the call started, UNKNOWN, even after the service closed it: an observation's events carry the key
     * values it had when it started; only its stop reads them again.
     */
    void cancelled() {
        cancelled.get().increment();
    }

    /** The call's time, under the status it was closed with (UNKNOWN if never) and the type of its error, if any. */
    void ended(Status.Code closedWith, Throwable error, long nanos, LongTaskTimer.Sample activeSample) {
        String code = closedWith != null ? closedWith.name() : UNKNOWN;
        Timer timer;
        if (error == null) {
            timer = ended.get(closedWith != null ? closedWith : Status.Code.UNKNOWN);
        } else {
            timer = timerWithError(code, error.getClass().getSimpleName());
        }
        timer.record(nanos, TimeUnit.NANOSECONDS);
        if (activeSample != null) {
            activeSample.stop();
        }
    }

    private Timer timerWithError(String code, String error) {
        String key = code + ' ' + error;
        Timer timer = endedWithError.get(key);
        if (timer == null) {
            timer = timer(code, error);
            if (endedWithError.size() < MAX_ERROR_TIMERS) {
                endedWithError.putIfAbsent(key, timer);
            }
        }
        return timer;
    }

    private Counter event(String event, Tags tags) {
        return Counter.builder("grpc.server." + event).tags(tags).register(registry);
    }

    private Timer timer(String code, String error) {
        return Timer.builder("grpc.server")
                .tags(status(code))
                .tag("error", error)
                .register(registry);
    }

    private Tags status(String code) {
        return method.and("grpc.status_code", code);
    }
}
