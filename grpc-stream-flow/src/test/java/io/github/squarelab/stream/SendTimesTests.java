package io.github.squarelab.stream;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class SendTimesTests {

    @Test
    void givesBackTimesOldestFirstAcrossGrowthAndWrapAround() {
        SendTimes times = new SendTimes();
        long next = 0;
        long expected = 0;
        // Interleave adds and polls so that the ring wraps before it has to grow, twice over.
        for (int round = 0; round < 3; round++) {
            for (int i = 0; i < 50; i++) {
                times.add(next++);
            }
            for (int i = 0; i < 30; i++) {
                assertThat(times.poll()).isEqualTo(expected++);
            }
            for (int i = 0; i < 100; i++) {
                times.add(next++);
            }
        }
        while (!times.isEmpty()) {
            assertThat(times.poll()).isEqualTo(expected++);
        }
        assertThat(expected).isEqualTo(next);
    }
}
