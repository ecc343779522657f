package io.github.squarelab.floor.measure;

import java.time.Duration;

/**
 * Keeps a server busy with calls, as many at a time as its window allows, and reports every answer to a
 * {@link Window}: correct ones through {@link Window#answered(long)}, anything else through
 * {@link Window#fail(String)}.
 */
public interface Load extends AutoCloseable {

    /** Connects and starts the calls; returns once they are under way. */
    void start(Window window) throws FloorFailure, InterruptedException;

    /**
     * Starts no more calls and waits for the ones in flight to be answered and checked. What is still
     * unanswered after {@code timeout} is given up (cancelled) and counted through
     * {@link Window#unanswered(long)}: it was slow, not wrong.
     */
    void stop(Duration timeout) throws InterruptedException;

    /** Releases connections and threads. */
    @Override
    void close();
}
