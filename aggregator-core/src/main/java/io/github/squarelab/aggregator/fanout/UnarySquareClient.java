package io.github.squarelab.aggregator.fanout;

import io.github.squarelab.payload.Shape;
import reactor.core.publisher.Mono;

/** One square per call, without blocking a thread while the call is under way. */
public interface UnarySquareClient {

    /** The transport this client speaks; the fan-out picks its client by it. */
    Transport transport();

    /**
     * The square of {@code number}, from the square service, in a call that carries the payload of {@code shape}
     * for that number ({@link Shape#SMALL}: none, the article's call) and whose echo is checked. Fails with a
     * {@link DownstreamException} (a wrong or missing echo is a {@link DownstreamException.Kind#BAD_ANSWER});
     * cancelling the Mono cancels the call.
     */
    Mono<Long> square(int number, Shape shape);
}
