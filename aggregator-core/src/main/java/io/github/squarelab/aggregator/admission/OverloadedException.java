package io.github.squarelab.aggregator.admission;

import java.time.Duration;

/** A request did not fit the admission budget: answered 503 with Retry-After, before any downstream call. */
public class OverloadedException extends RuntimeException {

    private final Duration retryAfter;

    public OverloadedException(String message, Duration retryAfter) {
        // Shedding must stay cheap under overload: no stack trace to fill in.
        super(message, null, false, false);
        this.retryAfter = retryAfter;
    }

    /** Whole seconds, at least one: HTTP's Retry-After has no finer unit. */
    public long retryAfterSeconds() {
        return wholeSeconds(retryAfter);
    }

    /** A Retry-After in whole seconds, rounded up, at least one. */
    static long wholeSeconds(Duration retryAfter) {
        return Math.max(1, (retryAfter.toMillis() + 999) / 1000);
    }
}
