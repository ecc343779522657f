package io.github.squarelab.aggregator.admission;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

class RequestLimitTests {

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final RequestLimit limit = new RequestLimit(2, registry);

    @Test
    void takesPlacesUpToItsMostAndGivesThemBack() {
        assertThat(limit.tryAcquire()).isTrue();
        assertThat(limit.tryAcquire()).isTrue();
        assertThat(limit.tryAcquire()).isFalse();
        assertThat(registry.get("aggregator.admission.requests").gauge().value())
                .isEqualTo(2);

        limit.release();

        assertThat(limit.tryAcquire()).isTrue();
        assertThat(limit.tryAcquire()).isFalse();
        assertThat(registry.get("aggregator.admission.max.requests").gauge().value())
                .isEqualTo(2);
    }

    @Test
    void theDefaultIsATwelfthOfTheHeapAt96KibibytesARequestAndAtLeast16() {
        assertThat(RequestLimit.defaultFor(128L << 20)).isEqualTo(113);
        assertThat(RequestLimit.defaultFor(1L << 30)).isEqualTo(910);
        assertThat(RequestLimit.defaultFor(1L << 20)).isEqualTo(16);
    }

    @Test
    void refusesALimitBelowOne() {
        assertThatThrownBy(() -> new RequestLimit(0, registry))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("the request limit must be at least 1, got 0");
    }
}
