package io.github.squarelab.aggregator.admission;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ConnectionBoundsTests {

    @Test
    void theDefaultIsAnEighthOfTheHeapAt6KibibytesAConnectionAndAtLeast64() {
        assertThat(ConnectionBounds.defaultFor(128L << 20)).isEqualTo(1365);
        assertThat(ConnectionBounds.defaultFor(1L << 30)).isEqualTo(10922);
        assertThat(ConnectionBounds.defaultFor(1L << 20)).isEqualTo(64);
    }
}
