package io.github.squarelab.aggregator.fanout;

import reactor.core.publisher.Mono;

/** One square per call, without blocking a thread while the call is under way. */
public interface UnarySquareClient {

    /** The transport this client speaks; the fan-out picks its client by it. */
    Transport transport();

    /**
     * The square of {@code number}, from the square service. Fails with a {@link DownstreamException};
     * cancelling the Mono cancels the call.
     */
    Mono<Long> square(int number);
}
