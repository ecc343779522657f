package io.github.squarelab.aggregator.fanout;

import reactor.core.publisher.Mono;

/** The squares of 1..n as n messages on one stream, without blocking a thread while it runs. */
public interface StreamSquareClient {

    /** The transport this client speaks; the fan-out picks its client by it. */
    Transport transport();

    /**
     * The squares of 1..n, in order, from one stream. Fails with a {@link DownstreamException};
     * cancelling the Mono cancels the stream. Every message sent is reported to {@code recorder}, and
     * every one of them finished, answered or not, by the time the Mono terminates.
     */
    Mono<Squares> squares(int n, CallRecorder recorder);
}
