package io.github.squarelab.floor.measure;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;

class LatencyTests {

    @Test
    void percentilesAreNearestRankOverEverySampleOfEveryThread() {
        LatencySamples first = new LatencySamples();
        LatencySamples second = new LatencySamples();
        // 1..100 ms, odd ones on one thread and even ones on the other, out of order.
        LongStream.rangeClosed(1, 100).map(ms -> 101 - ms).forEach(ms -> (ms % 2 == 0 ? second : first).add(ms * 1_000_000));

        Latency latency = Latency.of(LatencySamples.sortedUnion(List.of(first, second)));

        assertThat(latency).isEqualTo(new Latency(50_000, 90_000, 99_000, 100_000));
    }

    @Test
    void oneSampleIsEveryPercentile() {
        LatencySamples samples = new LatencySamples();
        samples.add(1_500);

        assertThat(Latency.of(LatencySamples.sortedUnion(List.of(samples)))).isEqualTo(new Latency(1.5, 1.5, 1.5, 1.5));
    }

    @Test
    void noSamplesIsAllZero() {
        assertThat(Latency.of(new long[0])).isEqualTo(new Latency(0, 0, 0, 0));
    }

    @Test
    void samplesGrowPastTheirFirstArray() {
        LatencySamples samples = new LatencySamples();
        LongStream.range(0, 10_000).forEach(samples::add);

        long[] sorted = LatencySamples.sortedUnion(List.of(samples));

        assertThat(sorted).hasSize(10_000);
        assertThat(sorted[9_999]).isEqualTo(9_999);
    }
}
