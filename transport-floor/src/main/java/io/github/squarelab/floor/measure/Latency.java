package io.github.squarelab.floor.measure;

/**
 * Latency percentiles of the measured calls, in microseconds, nearest-rank: p50 is the smallest latency
 * that at least half of the calls did not exceed. All zero when there were no calls.
 */
public record Latency(double p50Micros, double p90Micros, double p99Micros, double maxMicros) {

    static Latency of(long[] sortedNanos) {
        if (sortedNanos.length == 0) {
            return new Latency(0, 0, 0, 0);
        }
        return new Latency(percentile(sortedNanos, 50), percentile(sortedNanos, 90), percentile(sortedNanos, 99),
            micros(sortedNanos[sortedNanos.length - 1]));
    }

    private static double percentile(long[] sortedNanos, int percent) {
        int rank = (int) Math.ceil(percent / 100.0 * sortedNanos.length);
        return micros(sortedNanos[Math.max(rank, 1) - 1]);
    }

    private static double micros(long nanos) {
        return nanos / 1000.0;
    }
}
