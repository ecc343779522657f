package io.github.squarelab.floor.measure;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.stream.LongStream;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;

class LatencyTests {

    @Test
    void percentilesAreNearestRankInMicrosecondsToWithinAThousandth() {
        Histogram nanos = new Histogram(3);
        LongStream.rangeClosed(1, 100).map(ms -> 101 - ms).forEach(ms -> nanos.recordValue(ms * 1_000_000));

        Latency latency = Latency.of(nanos);

        // Nearest rank picks 50, 90 and 99 ms; a neighbour (49, 51 ...) would be 2 % off, far outside.
        assertThat(latency.p50Micros()).isBetween(50_000.0, 50_000 * 1.001);
        assertThat(latency.p90Micros()).isBetween(90_000.0, 90_000 * 1.001);
        assertThat(latency.p99Micros()).isBetween(99_000.0, 99_000 * 1.001);
        assertThat(latency.maxMicros()).isBetween(100_000.0, 100_000 * 1.001);
    }

    @Test
    void belowTwoMicrosecondsEveryNanosecondIsExact() {
        Histogram nanos = new Histogram(3);
        LongStream.rangeClosed(1, 2000).forEach(nanos::recordValue);

        assertThat(Latency.of(nanos)).isEqualTo(new Latency(1, 1.8, 1.98, 2));
    }

    @Test
    void noSamplesIsAllZero() {
        assertThat(Latency.of(new Histogram(3))).isEqualTo(new Latency(0, 0, 0, 0));
    }
}
