package io.github.squarelab.observation;

import io.micrometer.core.instrument.Clock;
import io.micrometer.core.instrument.LongTaskTimer;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.observation.DefaultMeterObservationHandler;
import io.micrometer.core.instrument.observation.MeterObservationHandler;
import io.micrometer.observation.Observation;
import java.util.concurrent.TimeUnit;

/**
 * Micrometer's {@link DefaultMeterObservationHandler}, meter for meter (the same names, tags, kinds and durations),
 * without a registry lookup at every start, event and stop.
 *
 * <p>The default handler builds a {@code Meter.Id} and finds its meter in the registry each time: at the start (the
 * long task timer), at the stop (the timer) and at every event (a counter). On a gRPC stream that is two counters per
 * message, and JFR put it at 22 % of the gRPC square service's samples (docs/performance.md). Here:
 *
 * <ul>
 *   <li>an event's counter is kept in the observation's context: the next message of the same stream counts into it
 *       directly, after checking that the stream's tags are the same objects as before ({@link EventCounter});
 *   <li>the timer, the long task timer, and an event's counter the first time, come from a bounded map keyed by meter
 *       kind, observation name and low-cardinality key values ({@link MeterCache}), filled through the registry.
 * </ul>
 *
 * <p>Meter names and tags, as Micrometer 1.15 gives them: the timer {@code name} with the observation's
 * low-cardinality key values at its stop and {@code error} (the exception's simple class name, or {@code none}); the
 * long task timer {@code name.active} with the key values at its start, unless long task timers are off; the counter
 * {@code name.event} with the key values at the event. Timings use the registry's clock, as {@code Timer.Sample} does.
 *
 * <p>The context carries this handler's own state rather than a {@code Timer.Sample} and a {@code LongTaskTimer.Sample}:
 * nothing in these services reads those from a context.
 */
public final class CachedMeterObservationHandler implements MeterObservationHandler<Observation.Context> {

    private final Clock clock;
    private final boolean longTaskTimers;
    private final MeterCache meters;

    /** With {@code longTaskTimers} false, no {@code name.active} meters, as Spring Boot's property turns them off. */
    public CachedMeterObservationHandler(MeterRegistry registry, boolean longTaskTimers) {
        this.clock = registry.config().clock();
        this.longTaskTimers = longTaskTimers;
        this.meters = new MeterCache(registry);
    }

    @Override
    public void onStart(Observation.Context context) {
        LongTaskTimer.Sample active = null;
        if (longTaskTimers) {
            active = meters.longTaskTimer(context.getName(), context.getLowCardinalityKeyValues())
                    .start();
        }
        context.put(InFlightObservation.class, new InFlightObservation(clock.monotonicTime(), active));
    }

    @Override
    public void onEvent(Observation.Event event, Observation.Context context) {
        InFlightObservation inFlight = context.get(InFlightObservation.class);
        if (inFlight != null) {
            inFlight.counter(event, context, meters).increment();
        } else {
            // An event outside start and stop: counted all the same, as the default handler does.
            meters.counter(context.getName(), event.getName(), context.getLowCardinalityKeyValues())
                    .increment();
        }
    }

    @Override
    public void onStop(Observation.Context context) {
        InFlightObservation inFlight = context.getRequired(InFlightObservation.class);
        Timer timer = meters.timer(context.getName(), context.getLowCardinalityKeyValues(), error(context));
        timer.record(clock.monotonicTime() - inFlight.startNanos, TimeUnit.NANOSECONDS);
        if (inFlight.active != null) {
            inFlight.active.stop();
        }
    }

    private static String error(Observation.Context context) {
        Throwable error = context.getError();
        return error != null ? error.getClass().getSimpleName() : "none";
    }
}
