package io.github.squarelab.floor;

import java.time.Duration;

/**
 * Everything a client run is given. Defaults are the lab's default load: 100 concurrent aggregator
 * requests, each with up to 8 unary calls in flight, the REST ones on a pool of 64 connections, the stream
 * ones on one stream of 1000 messages per request ({@code /grpc/stream/1000}).
 *
 * @param transport which transport to drive
 * @param target the server, host:port
 * @param inFlight grpc_unary: calls in flight on the one channel; rest_unary: at most this many (one per connection)
 * @param streams grpc_stream: concurrent bidi streams on the one channel, each slot opening the next stream
 *     when its stream ends
 * @param messagesPerStream grpc_stream: how many messages each stream sends (and has answered) before it
 *     half-closes, as the aggregator sends n for {@code /grpc/stream/n}
 * @param connections rest_unary: keep-alive connections, one call in flight on each
 * @param warmup how long to run, from the first answer, before measuring; those calls are checked but not counted
 * @param duration how long to measure
 */
public record ClientSettings(Transport transport, String target, int inFlight, int streams, int messagesPerStream,
        int connections, Duration warmup, Duration duration) {

    public static final int DEFAULT_IN_FLIGHT = 100 * 8;
    public static final int DEFAULT_STREAMS = 100;
    public static final int DEFAULT_MESSAGES_PER_STREAM = 1000;
    public static final int DEFAULT_CONNECTIONS = 64;
    /**
     * Long enough for the JIT to compile gRPC's long code path on a small busy machine; the first
     * seconds of a gRPC run are far below its steady state, HTTP's much less so.
     */
    public static final Duration DEFAULT_WARMUP = Duration.ofSeconds(10);
    public static final Duration DEFAULT_DURATION = Duration.ofSeconds(10);

    /** How long the first answer may take: connecting, and a cold JVM on a busy machine. */
    public static final Duration FIRST_ANSWER_TIMEOUT = Duration.ofSeconds(30);
    /** How long the calls still in flight at the end of the measured interval may take to be answered. */
    public static final Duration DRAIN_TIMEOUT = Duration.ofSeconds(10);

    public ClientSettings {
        requirePositive("in-flight", inFlight);
        requirePositive("streams", streams);
        requirePositive("messages", messagesPerStream);
        requirePositive("connections", connections);
        if (warmup.isNegative() || duration.isNegative() || duration.isZero()) {
            throw new IllegalArgumentException("the warm-up must not be negative and the duration must be positive");
        }
    }

    /** rest_unary keeps one call in flight per connection, so never more connections than the window. */
    public int httpConnections() {
        return Math.min(inFlight, connections);
    }

    /**
     * The deadline of every call and stream: the longest the run can last (the wait for the first answer,
     * the warm-up, the measured interval and the drain), with a drain's worth to spare so that the load gives up what
     * is unanswered before a deadline fails it (a grpc_stream stream opened later in the run gets it from
     * its opening, so it too outlasts the run). A floor has no use for a call that outlives the run, and a
     * slow call is the measurement, not a failure: with thousands of calls in flight a call waits
     * in-flight / throughput, seconds on a busy machine, so the aggregator's 10 s would fail runs in
     * which nothing was wrong. Every call still carries a deadline, and so pays for its timer as the
     * aggregator's calls do.
     */
    public Duration deadline() {
        return FIRST_ANSWER_TIMEOUT.plus(warmup).plus(duration).plus(DRAIN_TIMEOUT.multipliedBy(2));
    }

    private static void requirePositive(String name, int value) {
        if (value < 1) {
            throw new IllegalArgumentException(name + " must be at least 1, not " + value);
        }
    }
}
