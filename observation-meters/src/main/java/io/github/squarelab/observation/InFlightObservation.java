package io.github.squarelab.observation;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.LongTaskTimer;
import io.micrometer.observation.Observation;
import java.util.Arrays;

/**
 * What one observation keeps from its start to its stop: its start, its long task timer's sample and its events'
 * counters, in an array replaced and never changed, as events may come from two threads at once.
 */
final class InFlightObservation {

    /** More than any observation has kinds of events (gRPC: received, sent, cancelled); past it, counters are not kept. */
    private static final int MAX_EVENT_COUNTERS = 8;

    private static final EventCounter[] NONE = {};

    final long startNanos;
    /** Null when long task timers are off. */
    final LongTaskTimer.Sample active;

    private volatile EventCounter[] counters = NONE;

    InFlightObservation(long startNanos, LongTaskTimer.Sample active) {
        this.startNanos = startNanos;
        this.active = active;
    }

    /** The counter of this event under the context's current name and tags. */
    Counter counter(Observation.Event event, Observation.Context context, MeterCache meters) {
        String name = context.getName();
        String eventName = event.getName();
        // Before any lookup: a counter found now carries the generation it was valid in.
        int generation = meters.generation();
        EventCounter[] known = counters;
        for (EventCounter counter : known) {
            if (counter.counts(name, eventName, generation, context)) {
                return counter.counter;
            }
        }
        EventCounter found = EventCounter.find(name, eventName, generation, context, meters);
        counters = with(known, found);
        return found.counter;
    }

    /** The counters with {@code found} in place of the one for the same event it replaces, if any. */
    private static EventCounter[] with(EventCounter[] known, EventCounter found) {
        EventCounter[] next = Arrays.copyOf(known, known.length + 1);
        int size = 0;
        for (EventCounter counter : known) {
            if (!counter.sameEvent(found)) {
                next[size++] = counter;
            }
        }
        if (size == MAX_EVENT_COUNTERS) {
            return known;
        }
        next[size++] = found;
        return Arrays.copyOf(next, size);
    }
}
