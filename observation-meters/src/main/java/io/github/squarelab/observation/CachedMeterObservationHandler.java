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
 * Micrometer 1.15's {@link DefaultMeterObservationHandler}, meter for meter (names, tags, kinds, registry clock),
 * without its registry lookup at every start, event and stop: an event's counter kept in the context
 * ({@link EventCounter}), other meters in a bounded {@link MeterCache} (docs/performance.md, "Observation meters
 * without a registry lookup"). The context holds this handler's state, not Micrometer's samples: nothing here reads them.
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
