package io.github.squarelab.aggregator.rest;

import io.github.squarelab.aggregator.fanout.DownstreamException;
import io.github.squarelab.aggregator.fanout.DownstreamException.Kind;
import io.github.squarelab.aggregator.fanout.Transport;
import io.github.squarelab.aggregator.fanout.UnarySquareClient;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.timeout.ReadTimeoutException;
import java.time.Duration;
import java.util.concurrent.TimeoutException;
import reactor.core.publisher.Mono;

/**
 * {@code GET /rest/square/unary/{number}} on the REST square service, over pooled keep-alive HTTP/1.1
 * connections (or a few HTTP/2 cleartext connections, each carrying many calls) to each of its replicas in
 * turn. A call that fails because its replica is unavailable
 * (refused, reset, closed before the answer, or HTTP 503) is tried once more on another replica (the same
 * one if it is the only one: a dropped keep-alive connection is not a dead service), within
 * the call's deadline; squares are idempotent. A timeout is not retried. Reactor Netty's client is used
 * directly: WebClient would add a request object, filters and a codec lookup to every call, for a body
 * that is one number.
 */
public class RestSquareClient implements UnarySquareClient {

    private static final String PATH = "/rest/square/unary/";

    private final Transport transport;
    private final RestReplicas replicas;
    private final Duration callDeadline;

    /**
     * @param transport REST_UNARY over HTTP/1.1 pools, or REST_H2C over multiplexed HTTP/2 connections, as the
     *     replicas' clients speak
     * @param replicas clients whose base URLs are the replicas, and whose pools and response timeouts
     *     enforce the per-call deadline
     * @param callDeadline the deadline those timeouts enforce, for error messages and for the retry's budget
     */
    RestSquareClient(Transport transport, RestReplicas replicas, Duration callDeadline) {
        this.transport = transport;
        this.replicas = replicas;
        this.callDeadline = callDeadline;
    }

    @Override
    public Transport transport() {
        return transport;
    }

    @Override
    public Mono<Long> square(int number) {
        return Mono.defer(() -> {
            long start = System.nanoTime();
            RestReplicas.Replica first = replicas.next();
            return attempt(first, number, null).onErrorResume(RestSquareClient::isUnavailable, error -> {
                replicas.failed(first);
                RestReplicas.Replica other = replicas.nextOtherThan(first);
                Duration left = callDeadline.minusNanos(System.nanoTime() - start);
                return left.isNegative() || left.isZero()
                        ? Mono.error(error)
                        : attempt(other, number, left)
                                .doOnError(RestSquareClient::isUnavailable, retryError -> replicas.failed(other));
            });
        });
    }

    /** One call to one replica; {@code budget}, if given, is what is left of the call's deadline. */
    private Mono<Long> attempt(RestReplicas.Replica replica, int number, Duration budget) {
        Mono<Long> call = replica.http()
                .get()
                .uri(PATH + number)
                .responseSingle((response, body) -> {
                    HttpResponseStatus status = response.status();
                    if (status.equals(HttpResponseStatus.OK)) {
                        return body.asString();
                    }
                    return Mono.error(
                            status.equals(HttpResponseStatus.SERVICE_UNAVAILABLE)
                                    ? new DownstreamException(
                                            Kind.UNAVAILABLE,
                                            "the REST square service at " + replica.baseUrl()
                                                    + " is unavailable: it answered HTTP 503 for number " + number)
                                    : badAnswer(replica, number, "HTTP " + status.code(), null));
                })
                .switchIfEmpty(Mono.error(() -> badAnswer(replica, number, "an empty body", null)))
                .map(body -> parse(replica, number, body));
        if (budget != null) {
            call = call.timeout(budget);
        }
        return call.onErrorMap(
                error -> !(error instanceof DownstreamException), error -> translate(replica, number, error));
    }

    private static boolean isUnavailable(Throwable error) {
        return error instanceof DownstreamException downstream && downstream.kind() == Kind.UNAVAILABLE;
    }

    private long parse(RestReplicas.Replica replica, int number, String body) {
        try {
            return Long.parseLong(body.trim());
        } catch (NumberFormatException e) {
            throw badAnswer(replica, number, "'" + abbreviate(body) + "', not a number", e);
        }
    }

    private DownstreamException translate(RestReplicas.Replica replica, int number, Throwable error) {
        if (isTimeout(error)) {
            return new DownstreamException(
                    Kind.TIMEOUT,
                    "no answer from the REST square service at "
                            + replica.baseUrl() + " for number " + number + " within " + callDeadline.toMillis()
                            + " ms (aggregator.call-deadline)",
                    error);
        }
        // Refused, reset or closed before the answer: the replica is down or going away.
        return new DownstreamException(
                Kind.UNAVAILABLE,
                "the REST square service at " + replica.baseUrl() + " is unreachable: " + rootMessage(error),
                error);
    }

    private static boolean isTimeout(Throwable error) {
        for (Throwable t = error; t != null; t = t.getCause()) {
            // TimeoutException also covers waiting too long for a pooled connection, and the retry's budget.
            if (t instanceof ReadTimeoutException || t instanceof TimeoutException) {
                return true;
            }
        }
        return false;
    }

    private static DownstreamException badAnswer(
            RestReplicas.Replica replica, int number, String what, Throwable cause) {
        return new DownstreamException(
                Kind.BAD_ANSWER,
                "the REST square service at " + replica.baseUrl() + " answered " + what + " for number " + number,
                cause);
    }

    private static String rootMessage(Throwable error) {
        Throwable root = error;
        while (root.getCause() != null) {
            root = root.getCause();
        }
        return root.getMessage() != null ? root.getMessage() : root.getClass().getSimpleName();
    }

    private static String abbreviate(String text) {
        return text.length() <= 40 ? text : text.substring(0, 40) + "...";
    }
}
