package io.github.squarelab.aggregator.rest;

import java.util.function.Supplier;
import reactor.core.publisher.Mono;

/**
 * One call to one replica over one HTTP client, with no policy of its own: RestSquareClient chooses the replica and
 * retries, RestSquareCall reads the answer. Fails with the client's own exception when the call gets no answer (refused,
 * reset, closed, or timed out: a {@link java.util.concurrent.TimeoutException} or Netty's ReadTimeoutException).
 */
interface RestExchange {

    byte[] NO_BODY = new byte[0];

    /** The status of an answer, and its body if the status is 200 (else none: it is not read). */
    record Answer(int status, byte[] body) {}

    /** {@code GET} of {@code path} on this replica. */
    Mono<Answer> get(String path);

    /**
     * {@code POST} of {@code path} on this replica, with {@code json} as its body: built only once the call is under
     * way, so that a call waiting for a connection holds no payload.
     */
    Mono<Answer> post(String path, Supplier<byte[]> json);

    /** Closes the client's connections, and its threads if it has its own. */
    void close();
}
