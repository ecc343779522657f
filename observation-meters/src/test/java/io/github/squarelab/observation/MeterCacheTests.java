package io.github.squarelab.observation;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.common.KeyValues;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

/** The cache hands out the registry's own meters, keeps a bounded number of them, and forgets them on removal. */
class MeterCacheTests {

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final MeterCache meters = new MeterCache(registry);

    @Test
    void theMetersAreTheRegistrysOwnUnderMicrometersNames() {
        KeyValues tags = KeyValues.of("method", "Square");

        assertThat(meters.timer("rpc", tags, "none"))
                .isSameAs(registry.get("rpc")
                        .tags("method", "Square", "error", "none")
                        .timer())
                .isSameAs(meters.timer("rpc", KeyValues.of("method", "Square"), "none"));
        assertThat(meters.longTaskTimer("rpc", tags))
                .isSameAs(registry.get("rpc.active").tags("method", "Square").longTaskTimer());
        assertThat(meters.counter("rpc", "received", tags))
                .isSameAs(registry.get("rpc.received").tags("method", "Square").counter());
        assertThat(meters.size()).isEqualTo(3);
    }

    @Test
    void pastItsBoundItKeepsNoMoreAndStillHandsOutTheRegistrysMeters() {
        int beyond = MeterCache.MAX_METERS + 10;
        for (int i = 0; i < beyond; i++) {
            meters.counter("bulk", "received", KeyValues.of("method", "m" + i));
        }

        assertThat(meters.size()).isEqualTo(MeterCache.MAX_METERS);
        String last = "m" + (beyond - 1);
        assertThat(meters.counter("bulk", "received", KeyValues.of("method", last)))
                .isSameAs(registry.get("bulk.received").tag("method", last).counter());
    }

    @Test
    void aMeterRemovedFromTheRegistryEmptiesTheCacheAndMovesTheGeneration() {
        Counter first = meters.counter("rpc", "received", KeyValues.of("method", "Square"));
        int generation = meters.generation();

        registry.remove(first);

        assertThat(meters.size()).isZero();
        assertThat(meters.generation()).isNotEqualTo(generation);
        Counter again = meters.counter("rpc", "received", KeyValues.of("method", "Square"));
        assertThat(again)
                .isNotSameAs(first)
                .isSameAs(registry.get("rpc.received").counter());
    }
}
