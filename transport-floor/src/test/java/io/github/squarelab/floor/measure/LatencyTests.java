package io.github.squarelab.floor.measure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.SplittableRandom;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;

class LatencyTests {

    @Test
    void percentilesAreNearestRankOverEverySampleOfEveryThreadToWithinAThousandth() {
        LatencyHistogram first = new LatencyHistogram();
        LatencyHistogram second = new LatencyHistogram();
        // 1..100 ms, odd ones on one thread and even ones on the other, out of order.
        LongStream.rangeClosed(1, 100).map(ms -> 101 - ms).forEach(ms -> (ms % 2 == 0 ? second : first).add(ms * 1_000_000));
        LatencyHistogram all = new LatencyHistogram();
        all.addAll(first);
        all.addAll(second);

        Latency latency = Latency.of(all);

        assertThat(all.count()).isEqualTo(100);
        // Nearest rank picks 50, 90 and 99 ms; a neighbour (49, 51 ...) would be 2 % off, far outside.
        assertThat(latency.p50Micros()).isBetween(50_000.0, 50_000 * 1.001);
        assertThat(latency.p90Micros()).isBetween(90_000.0, 90_000 * 1.001);
        assertThat(latency.p99Micros()).isBetween(99_000.0, 99_000 * 1.001);
        assertThat(latency.maxMicros()).isEqualTo(100_000);
    }

    @Test
    void belowTwoMicrosecondsEveryNanosecondIsExact() {
        LatencyHistogram nanos = new LatencyHistogram();
        LongStream.rangeClosed(1, 2000).forEach(nanos::add);

        assertThat(Latency.of(nanos)).isEqualTo(new Latency(1, 1.8, 1.98, 2));
    }

    @Test
    void oneSampleIsEveryPercentileExactly() {
        LatencyHistogram samples = new LatencyHistogram();
        samples.add(12_345_678);

        assertThat(Latency.of(samples)).isEqualTo(new Latency(12_345.678, 12_345.678, 12_345.678, 12_345.678));
    }

    @Test
    void noSamplesIsAllZero() {
        assertThat(Latency.of(new LatencyHistogram())).isEqualTo(new Latency(0, 0, 0, 0));
    }

    /** Every value, from 0 to the largest long, lands in a bucket that holds it and is a thousandth wide at most. */
    @Test
    void everyBucketHoldsItsValueAndIsAtMostAThousandthOfItWide() {
        SplittableRandom random = new SplittableRandom(7);
        LongStream values = LongStream.concat(
            LongStream.of(0, 1, 2047, 2048, 2049, 4095, 4096, Long.MAX_VALUE - 1, Long.MAX_VALUE),
            LongStream.concat(random.longs(100_000, 0, Long.MAX_VALUE),
                random.longs(100_000, 0, 1L << 40)));

        values.forEach(value -> {
            int bucket = LatencyHistogram.bucketOf(value);
            long highest = LatencyHistogram.highestIn(bucket);
            assertThat(highest).as("highest in the bucket of %d", value).isGreaterThanOrEqualTo(value)
                .isCloseTo(value, within(value / 1024));
            if (bucket > 0) {
                assertThat(LatencyHistogram.highestIn(bucket - 1)).as("highest in the bucket below %d", value)
                    .isLessThan(value);
            }
        });
    }
}
