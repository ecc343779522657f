package io.github.squarelab.floor.measure;

import java.time.Duration;

/**
 * What one run measured.
 *
 * @param calls calls (or stream messages) answered and checked while the interval was open
 * @param measured how long the interval was open
 * @param latency latency percentiles of those calls
 * @param clientCpu CPU time the client process used while the interval was open
 * @param answersChecked every answer checked in the whole run: warm-up, interval and the wait for the last
 *     calls in flight
 * @param unansweredAtEnd calls (stream messages) still unanswered when the wait for them ended, given up
 */
public record Measurement(
        long calls, Duration measured, Latency latency, Duration clientCpu, long answersChecked, long unansweredAtEnd) {

    public double seconds() {
        return measured.toNanos() / 1e9;
    }

    public double callsPerSecond() {
        return calls / seconds();
    }
}
