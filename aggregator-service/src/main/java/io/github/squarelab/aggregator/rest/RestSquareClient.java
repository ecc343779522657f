package io.github.squarelab.aggregator.rest;

import io.github.squarelab.aggregator.fanout.DownstreamException;
import io.github.squarelab.aggregator.fanout.DownstreamException.Kind;
import io.github.squarelab.aggregator.fanout.Transport;
import io.github.squarelab.aggregator.fanout.UnarySquareClient;
import io.github.squarelab.payload.Shape;
import java.time.Duration;
import reactor.core.publisher.Mono;

/**
 * {@code /rest/square/unary/{number}} on the REST square service's replicas in turn, over pooled keep-alive
 * HTTP/1.1 connections or a few multiplexed HTTP/2 cleartext ones. A call whose replica is unavailable (refused,
 * reset, closed before the answer, or HTTP 503) is tried once more on another replica (the same one if it is the
 * only one: a dropped keep-alive connection is not a dead service) within the call's deadline; squares are
 * idempotent. A timeout is not retried. The call itself, and what its answer must be, is {@link RestSquareCall}.
 */
public class RestSquareClient implements UnarySquareClient {

    private final Transport transport;
    private final RestReplicas replicas;
    private final Duration callDeadline;
    private final RestSquareCall call;

    /**
     * @param transport REST_UNARY over HTTP/1.1 pools, or REST_H2C over multiplexed HTTP/2 connections, as the
     *     replicas' clients speak
     * @param replicas the replicas, each with a client that enforces the per-call deadline
     * @param callDeadline the deadline those clients enforce, for error messages and for the retry's budget
     */
    RestSquareClient(Transport transport, RestReplicas replicas, Duration callDeadline) {
        this.transport = transport;
        this.replicas = replicas;
        this.callDeadline = callDeadline;
        this.call = new RestSquareCall(callDeadline);
    }

    @Override
    public Transport transport() {
        return transport;
    }

    @Override
    public Mono<Long> square(int number, Shape shape) {
        return Mono.defer(() -> {
            long start = System.nanoTime();
            RestReplicas.Replica first = replicas.next();
            return call.square(first, number, shape, null).onErrorResume(RestSquareClient::isUnavailable, error -> {
                replicas.failed(first);
                RestReplicas.Replica other = replicas.nextOtherThan(first);
                Duration left = callDeadline.minusNanos(System.nanoTime() - start);
                return left.isNegative() || left.isZero()
                        ? Mono.error(error)
                        : call.square(other, number, shape, left)
                                .doOnError(RestSquareClient::isUnavailable, retryError -> replicas.failed(other));
            });
        });
    }

    private static boolean isUnavailable(Throwable error) {
        return error instanceof DownstreamException downstream && downstream.kind() == Kind.UNAVAILABLE;
    }
}
