package io.github.squarelab.floor;

import java.time.Duration;
import java.util.Optional;

/**
 * Everything a client run is given. The lab passes every load option, so none has a default here; the
 * ones a transport does not use are 0.
 *
 * @param transport which transport to drive
 * @param target the server, host:port
 * @param inFlight grpc_unary: calls in flight on the one channel
 * @param streams grpc_stream and grpc_pingpong: bidi streams open at once on the one channel, each slot
 *     opening its next stream when one ends; rest_h2c: calls in flight, one stream each, over the connections
 * @param messagesPerStream grpc_stream and grpc_pingpong: messages each stream sends, and has answered,
 *     before it half-closes, as the aggregator sends n for {@code /grpc/stream/n} and {@code /grpc/pingpong/n}
 * @param connections rest_unary: keep-alive connections, one call in flight on each; rest_h2c: HTTP/2
 *     connections the streams are spread over
 * @param warmup how long to run, from the first answer, before measuring; those calls are checked but not counted
 * @param duration how long to measure
 * @param tls under TLS, the CA the client trusts and, for mutual TLS, its certificate; null for plaintext
 */
public record ClientSettings(
        Transport transport,
        String target,
        int inFlight,
        int streams,
        int messagesPerStream,
        int connections,
        Duration warmup,
        Duration duration,
        FloorTls tls) {

    /** How long the first answer may take: connecting, and a cold JVM on a busy machine. */
    public static final Duration FIRST_ANSWER_TIMEOUT = Duration.ofSeconds(30);
    /** How long the calls still in flight at the end of the measured interval may take to be answered. */
    public static final Duration DRAIN_TIMEOUT = Duration.ofSeconds(10);

    /** In plaintext. */
    public ClientSettings(
            Transport transport,
            String target,
            int inFlight,
            int streams,
            int messagesPerStream,
            int connections,
            Duration warmup,
            Duration duration) {
        this(transport, target, inFlight, streams, messagesPerStream, connections, warmup, duration, null);
    }

    public ClientSettings {
        if (duration.isNegative() || duration.isZero()) {
            throw new IllegalArgumentException("--duration must be more than 0 seconds");
        }
    }

    public Optional<FloorTls> encrypted() {
        return Optional.ofNullable(tls);
    }

    /** Every call's and stream's deadline: longer than the whole run, so a slow call is measured, not failed. */
    public Duration deadline() {
        return FIRST_ANSWER_TIMEOUT.plus(warmup).plus(duration).plus(DRAIN_TIMEOUT.multipliedBy(2));
    }
}
