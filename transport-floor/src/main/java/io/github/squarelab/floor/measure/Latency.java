package io.github.squarelab.floor.measure;

import org.HdrHistogram.Histogram;

/**
 * Latency percentiles of the measured calls, in microseconds, nearest-rank, to within a thousandth (the
 * histogram keeps three significant digits). All zero when there were no calls.
 */
public record Latency(double p50Micros, double p90Micros, double p99Micros, double maxMicros) {

    static Latency of(Histogram nanos) {
        return new Latency(
                micros(nanos.getValueAtPercentile(50)),
                micros(nanos.getValueAtPercentile(90)),
                micros(nanos.getValueAtPercentile(99)),
                micros(nanos.getMaxValue()));
    }

    private static double micros(long nanos) {
        return nanos / 1000.0;
    }
}
