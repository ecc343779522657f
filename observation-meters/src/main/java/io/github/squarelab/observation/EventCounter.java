package io.github.squarelab.observation;

import io.micrometer.common.KeyValue;
import io.micrometer.common.KeyValues;
import io.micrometer.core.instrument.Counter;
import io.micrometer.observation.Observation;

/**
 * The counter of one event of one observation in flight, with the key values it was found under.
 *
 * <p>Reused while each of those key values is still the very object in the context: checking that takes a map lookup
 * per key and builds nothing, where reading the context's key values again sorts them into a new {@link KeyValues} (a
 * gRPC stream would pay that twice per message). A value changed or removed since is a different object, or none, and
 * the counter is found again for the new tags, as Micrometer's own handler would.
 *
 * <p>What it does not see is a key added to the observation after its first event of that name: those events keep
 * counting under the first tags. Micrometer's handler would count them into a meter with one more tag, which the
 * Prometheus registry refuses to export (one meter name, one set of tag keys). No observation in these services adds a
 * key between events: gRPC's sets its keys when the call starts and when it ends.
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
