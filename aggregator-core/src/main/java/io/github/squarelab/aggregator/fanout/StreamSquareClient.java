package io.github.squarelab.aggregator.fanout;

import io.github.squarelab.payload.Shape;
import reactor.core.publisher.Mono;

/** The squares of 1..n as n messages on one stream, without blocking a thread while it runs. */
public interface StreamSquareClient {

    /** The transport this client speaks; the fan-out picks its client by it. */
    Transport transport();

    /**
     * The squares of 1..n, in order, from one stream, each message carrying the payload of {@code shape} for its
     * number ({@link Shape#SMALL}: none) and each echo checked. Fails with a {@link DownstreamException};
     * cancelling the Mono cancels the stream. Every message sent is reported to {@code recorder}, and
     * every one of them finished, answered or not, by the time the Mono terminates.
     */
    Mono<Squares> squares(int n, Shape shape, CallRecorder recorder);
}
