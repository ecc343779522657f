package io.github.squarelab.observation;

import io.micrometer.common.KeyValue;
import io.micrometer.common.KeyValues;
import io.micrometer.core.instrument.Counter;
import io.micrometer.observation.Observation;

/**
 * The counter of one event of one observation in flight, reused while each key value it was found under is still the
 * very object in the context (a lookup per key, no sort). A key added after the first event is not seen, which
 * Prometheus could not export anyway; no observation here adds one between events.
 */
final class EventCounter {

    final Counter counter;

    private final String name;
    private final String event;
    private final int generation;
    private final KeyValue[] keyValues;

    private EventCounter(String name, String event, int generation, KeyValue[] keyValues, Counter counter) {
        this.name = name;
        this.event = event;
        this.generation = generation;
        this.keyValues = keyValues;
        this.counter = counter;
    }

    /** Looks the counter up for the context's key values as they are now. */
    static EventCounter find(
            String name, String event, int generation, Observation.Context context, MeterCache meters) {
        KeyValues keyValues = context.getLowCardinalityKeyValues();
        Counter counter = meters.counter(name, event, keyValues);
        return new EventCounter(name, event, generation, keyValues.stream().toArray(KeyValue[]::new), counter);
    }

    /** True if this counter is the one Micrometer would find for this event now. */
    boolean counts(String name, String event, int generation, Observation.Context context) {
        if (!this.event.equals(event) || !this.name.equals(name) || this.generation != generation) {
            return false;
        }
        for (KeyValue keyValue : keyValues) {
            if (context.getLowCardinalityKeyValue(keyValue.getKey()) != keyValue) {
                return false;
            }
        }
        return true;
    }

    boolean sameEvent(EventCounter other) {
        return event.equals(other.event) && name.equals(other.name);
    }
}
