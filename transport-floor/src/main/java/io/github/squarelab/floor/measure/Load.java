package io.github.squarelab.floor.measure;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Keeps a server busy with calls, as many at a time as its window allows, and reports every answer to a
 * {@link MeasuredInterval}: correct ones through {@link MeasuredInterval#answered(long)}, anything else through
 * {@link MeasuredInterval#fail(String)}.
 */
public interface Load extends AutoCloseable {

    /** Connects and starts the calls; returns once they are under way. */
    void start(MeasuredInterval interval) throws FloorFailure, InterruptedException;

    /**
     * Starts no more calls and waits for the ones in flight to be answered and checked. What is still
     * unanswered after {@code timeout} is given up (cancelled) and counted through
     * {@link MeasuredInterval#unanswered(long)}: it was slow, not wrong.
     */
    void stop(Duration timeout) throws InterruptedException;

    /** Releases connections and threads. */
    @Override
    void close();

    /** Giving up is local and immediate; this only guards against a call that never reports its end. */
    Duration GIVE_UP_GRACE = Duration.ofSeconds(5);

    /**
     * The end of {@link #stop}: waits at most {@code timeout} for {@code ended} to count down, then runs
     * {@code giveUp}, which cuts the rest off so that they end and count themselves unanswered, and waits
     * {@link #GIVE_UP_GRACE} more. Whatever has still not ended then fails the run, as
     * "N {@code notEnded}".
     */
    static void awaitEnd(MeasuredInterval interval, CountDownLatch ended, Duration timeout, Runnable giveUp, String notEnded)
            throws InterruptedException {
        if (ended.await(timeout.toNanos(), TimeUnit.NANOSECONDS)) {
            return;
        }
        giveUp.run();
        if (!ended.await(GIVE_UP_GRACE.toNanos(), TimeUnit.NANOSECONDS)) {
            interval.fail(ended.getCount() + " " + notEnded);
        }
    }
}
