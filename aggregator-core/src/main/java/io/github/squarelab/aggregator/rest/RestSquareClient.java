package io.github.squarelab.aggregator.rest;

import io.github.squarelab.aggregator.fanout.DownstreamException;
import io.github.squarelab.aggregator.fanout.DownstreamException.Kind;
import io.github.squarelab.aggregator.fanout.Transport;
import io.github.squarelab.aggregator.fanout.UnarySquareClient;
import io.github.squarelab.payload.Shape;
import java.time.Duration;
import reactor.core.publisher.Mono;

/**
 * The REST failover policy: replicas in turn, and a call whose replica is unavailable (refused, reset, closed, 503)
 * tried once more on another, or the same if it is the only one, within the call's deadline; a timeout is not retried.
 * The call itself is {@link RestSquareCall}.
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
