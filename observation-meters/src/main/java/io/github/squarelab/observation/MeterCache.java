package io.github.squarelab.observation;

import io.micrometer.common.KeyValue;
import io.micrometer.common.KeyValues;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.LongTaskTimer;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Timer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Observations' meters by kind, name and low-cardinality key values, registered through the registry the first time so
 * that its filters apply; at most {@link #MAX_METERS} kept, and emptied when the registry removes a meter.
 */
final class MeterCache {

    /**
     * Far above the tag sets the services produce (a few dozen: methods, URI templates, statuses). Each is a Prometheus
     * series; thousands would be a cardinality problem of their own, not something to keep in memory twice.
     */
    static final int MAX_METERS = 2048;

    private final MeterRegistry registry;
    private final ConcurrentHashMap<Key, Meter> meters = new ConcurrentHashMap<>();
    /** Changes whenever a meter leaves the registry: meters kept outside this cache check it before they are reused. */
    private final AtomicInteger generation = new AtomicInteger();

    MeterCache(MeterRegistry registry) {
        this.registry = registry;
        registry.config().onMeterRemoved(removed -> forgetAll());
    }

    Timer timer(String name, KeyValues keyValues, String error) {
        Key key = new Key(Kind.TIMER, name, error, keyValues);
        Meter meter = meters.get(key);
        if (meter == null) {
            int seen = generation();
            meter = keep(key, Timer.builder(name).tags(tags(keyValues, error)).register(registry), seen);
        }
        return (Timer) meter;
    }

    /** The long task timer of an observation called {@code name}: {@code name.active}, as Micrometer names it. */
    LongTaskTimer longTaskTimer(String name, KeyValues keyValues) {
        Key key = new Key(Kind.LONG_TASK_TIMER, name, null, keyValues);
        Meter meter = meters.get(key);
        if (meter == null) {
            int seen = generation();
            meter = keep(
                    key,
                    LongTaskTimer.builder(name + ".active")
                            .tags(tags(keyValues, null))
                            .register(registry),
                    seen);
        }
        return (LongTaskTimer) meter;
    }

    /** The counter of an event of an observation called {@code name}: {@code name.event}, as Micrometer names it. */
    Counter counter(String name, String event, KeyValues keyValues) {
        Key key = new Key(Kind.COUNTER, name, event, keyValues);
        Meter meter = meters.get(key);
        if (meter == null) {
            int seen = generation();
            meter = keep(
                    key,
                    Counter.builder(name + "." + event)
                            .tags(tags(keyValues, null))
                            .register(registry),
                    seen);
        }
        return (Counter) meter;
    }

    /** Read before a meter is looked up: a meter found under an older generation may have left the registry since. */
    int generation() {
        return generation.get();
    }

    /** The meters kept now. */
    int size() {
        return meters.size();
    }

    private Meter keep(Key key, Meter registered, int seen) {
        if (meters.size() >= MAX_METERS) {
            return registered;
        }
        Meter kept = meters.putIfAbsent(key, registered);
        // A meter removed while this one was registered may have emptied the cache before the put: don't keep it.
        if (generation() != seen) {
            meters.remove(key, registered);
        }
        return kept != null ? kept : registered;
    }

    /** The generation first, then the entries: a lookup racing with the removal sees one or the other. */
    private void forgetAll() {
        generation.incrementAndGet();
        meters.clear();
    }

    /** The tags Micrometer's DefaultMeterObservationHandler gives the meter, in the same order. */
    private static List<Tag> tags(KeyValues keyValues, String error) {
        List<Tag> tags = new ArrayList<>();
        for (KeyValue keyValue : keyValues) {
            tags.add(Tag.of(keyValue.getKey(), keyValue.getValue()));
        }
        if (error != null) {
            tags.add(Tag.of("error", error));
        }
        return tags;
    }

    private enum Kind {
        TIMER,
        LONG_TASK_TIMER,
        COUNTER
    }

    /**
     * One meter: the observation's name (not the meter's, to build no string per lookup), the event for a counter or
     * the error for a timer, and the low-cardinality key values as the observation had them.
     */
    private record Key(Kind kind, String name, String qualifier, KeyValues keyValues) {}
}
