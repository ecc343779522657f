package io.github.squarelab.payload;

/** The REST wire's HTTP/2 limit both sides of it keep: the square service serves it, the aggregator stays under it. */
public final class H2cStreams {

    /**
     * Calls one REST square replica carries at once over HTTP/2, fewer than its 200 Tomcat threads so that some are
     * left to read request bodies (docs/performance.md, "The aggregator's h2c streams per replica").
     */
    public static final int PER_REPLICA = 160;

    private H2cStreams() {}
}
