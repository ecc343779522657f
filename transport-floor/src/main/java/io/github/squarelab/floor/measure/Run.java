package io.github.squarelab.floor.measure;

import java.io.PrintStream;
import java.time.Duration;
import org.HdrHistogram.Histogram;

/**
 * Starts a load, waits for its first answer (gRPC connects lazily, and a cold JVM on a busy machine may
 * take seconds to get there), warms it up, discards that, measures it for a fixed time, then waits for
 * the calls still in flight so that every answer is checked. Progress goes to a stream of its own, one line per phase; the lines
 * starting {@code floor: measuring} and {@code floor: measured} mark the interval, so that a script can
 * sample the server's CPU time at the same moments.
 */
public final class Run {

    private Run() {
    }

    /** @param firstAnswerTimeout how long the first answer may take, connecting included */
    public static Measurement measure(Load load, Duration firstAnswerTimeout, Duration warmup, Duration duration,
            Duration drainTimeout, PrintStream progress) throws FloorFailure, InterruptedException {
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
        return new Measurement(latencies.getTotalCount(), interval.measured(), Latency.of(latencies), interval.cpuWhileOpen(),
            interval.answersChecked(), interval.unansweredAtEnd());
    }
}
