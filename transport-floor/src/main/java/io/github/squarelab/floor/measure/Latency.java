package io.github.squarelab.floor.measure;

/**
 * Latency percentiles of the measured calls, in microseconds, nearest-rank: p50 is the smallest latency
 * that at least half of the calls did not exceed, to within a thousandth of it (see
 * {@link LatencyHistogram}); the maximum is exact. All zero when there were no calls.
 */
public record Latency(double p50Micros, double p90Micros, double p99Micros, double maxMicros) {

    static Latency of(LatencyHistogram nanos) {
        return new Latency(micros(nanos.percentile(50)), micros(nanos.percentile(90)), micros(nanos.percentile(99)),
            micros(nanos.max()));
    }

    private static double micros(long nanos) {
        return nanos / 1000.0;
    }
}
