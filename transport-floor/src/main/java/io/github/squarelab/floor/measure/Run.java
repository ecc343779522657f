package io.github.squarelab.floor.measure;

import java.io.PrintStream;
import java.time.Duration;
import org.HdrHistogram.Histogram;

/**
 * Starts a load, waits for its first answer, warms up, measures for a fixed time, then checks the calls
 * still in flight. The lab samples the server's CPU on the progress lines {@code floor: measuring} and
 * {@code floor: measured}, so they stay as they are.
 */
public final class Run {

    private Run() {}

    /** @param firstAnswerTimeout how long the first answer may take, connecting included */
    public static Measurement measure(
            Load load,
            Duration firstAnswerTimeout,
            Duration warmup,
            Duration duration,
            Duration drainTimeout,
            PrintStream progress)
            throws FloorFailure, InterruptedException {
        MeasuredInterval interval = new MeasuredInterval();
        load.start(interval);
        interval.awaitFirstAnswer(firstAnswerTimeout);
        progress.println("floor: warming up for " + warmup.toMillis() + " ms");
        interval.await(warmup);

        interval.open();
        progress.println("floor: measuring for " + duration.toMillis() + " ms");
        try {
            interval.await(duration);
        } finally {
            interval.close();
        }
        progress.println("floor: measured; checking the answers still in flight");

        load.stop(drainTimeout);
        interval.throwIfFailed();
        Histogram latencies = interval.latencies();
        return new Measurement(
                latencies.getTotalCount(),
                interval.measured(),
                Latency.of(latencies),
                interval.cpuWhileOpen(),
                interval.answersChecked(),
                interval.unansweredAtEnd());
    }
}
