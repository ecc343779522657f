package io.github.squarelab.floor.measure;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/** Keeps a server busy with as many calls at a time as its window allows, reporting every answer. */
public interface Load extends AutoCloseable {

    /** Connects and starts the calls; returns once they are under way. */
    void start(MeasuredInterval interval) throws FloorFailure, InterruptedException;

    /** Starts no more calls; what is unanswered after {@code timeout} is cancelled and counted: slow, not wrong. */
    void stop(Duration timeout) throws InterruptedException;

    /** Under TLS, what the handshake agreed on, once a connection has made one; else empty. */
    default Optional<Negotiated> negotiated() {
        return Optional.empty();
    }

    /** Releases connections and threads. */
    @Override
    void close();

    /** Giving up is local and immediate; this only guards against a call that never reports its end. */
    Duration GIVE_UP_GRACE = Duration.ofSeconds(5);

    /** Waits {@code timeout} for {@code ended}, then {@code giveUp}s; what still has not ended fails the run. */
    static void awaitEnd(
            MeasuredInterval interval, CountDownLatch ended, Duration timeout, Runnable giveUp, String notEnded)
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
