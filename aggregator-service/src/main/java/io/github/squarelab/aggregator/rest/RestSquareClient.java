package io.github.squarelab.aggregator.rest;

import io.github.squarelab.aggregator.fanout.DownstreamException;
import io.github.squarelab.aggregator.fanout.DownstreamException.Kind;
import io.github.squarelab.aggregator.fanout.Transport;
import io.github.squarelab.aggregator.fanout.UnarySquareClient;
import io.github.squarelab.payload.EchoJson;
import io.github.squarelab.payload.InvalidPayloadException;
import io.github.squarelab.payload.JsonPayloads;
import io.github.squarelab.payload.PayloadJsonCodec;
import io.github.squarelab.payload.Shape;
import io.netty.handler.timeout.ReadTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeoutException;
import org.springframework.http.HttpStatus;
import reactor.core.publisher.Mono;

/**
 * {@code GET /rest/square/unary/{number}} on the REST square service, over pooled keep-alive HTTP/1.1
 * connections (or a few HTTP/2 cleartext connections, each carrying many calls) to each of its replicas in
 * turn. A call that fails because its replica is unavailable
 * (refused, reset, closed before the answer, or HTTP 503) is tried once more on another replica (the same
 * one if it is the only one: a dropped keep-alive connection is not a dead service), within
 * the call's deadline; squares are idempotent. A timeout is not retried. This policy, and what an answer must be,
 * are the same whichever HTTP client ({@link RestExchange}) makes the one call to one replica.
 *
 * <p>A call of the shape small is the article's GET, exactly as before. Any other shape is a {@code POST} of the
 * same path whose JSON body is the shape's payload for the number, built as records and written with Jackson only
 * once the call is under way (and again for a retry): a call waiting for one of the pool's connections
 * holds no payload, so that thousands of them queued under overload do not fill the heap; the answer, {@code {"result":..,"payload":..}}, is read strictly with
 * Jackson and its payload checked in place against the shape's values for the number: an answer without it or
 * with another one is a bad answer.
 */
public class RestSquareClient implements UnarySquareClient {

    private static final String PATH = "/rest/square/unary/";

    private final Transport transport;
    private final RestReplicas replicas;
    private final Duration callDeadline;

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
            return attempt(first, number, shape, null).onErrorResume(RestSquareClient::isUnavailable, error -> {
                replicas.failed(first);
                RestReplicas.Replica other = replicas.nextOtherThan(first);
                Duration left = callDeadline.minusNanos(System.nanoTime() - start);
                return left.isNegative() || left.isZero()
                        ? Mono.error(error)
                        : attempt(other, number, shape, left)
                                .doOnError(RestSquareClient::isUnavailable, retryError -> replicas.failed(other));
            });
        });
    }

    /**
     * One call to one replica: the GET, or with a payload the POST; {@code budget}, if given, is what is left of the
     * call's deadline.
     */
    private Mono<Long> attempt(RestReplicas.Replica replica, int number, Shape shape, Duration budget) {
        Mono<Long> call = shape.hasPayload() ? post(replica, number, shape) : get(replica, number);
        if (budget != null) {
            call = call.timeout(budget);
        }
        return call.onErrorMap(
                error -> !(error instanceof DownstreamException), error -> translate(replica, number, error));
    }

    private Mono<Long> get(RestReplicas.Replica replica, int number) {
        return replica.exchange()
                .get(PATH + number)
                .map(answer -> parse(replica, number, body(replica, number, answer)));
    }

    /** The exchange builds the payload only once the call is under way, not before it waits for a connection. */
    private Mono<Long> post(RestReplicas.Replica replica, int number, Shape shape) {
        return replica.exchange()
                .post(PATH + number, () -> PayloadJsonCodec.write(JsonPayloads.of(shape, number)))
                .map(answer -> checkEcho(replica, number, shape, body(replica, number, answer)));
    }

    /** The body of a 200 answer; any other status, or no body, fails the call. */
    private static byte[] body(RestReplicas.Replica replica, int number, RestExchange.Answer answer) {
        if (answer.status() != HttpStatus.OK.value()) {
            throw failed(replica, number, answer.status());
        }
        if (answer.body().length == 0) {
            throw badAnswer(replica, number, "an empty body", null);
        }
        return answer.body();
    }

    /** 503 is a replica that is unavailable (tried again elsewhere); any other status a bad answer. */
    private static DownstreamException failed(RestReplicas.Replica replica, int number, int status) {
        return status == HttpStatus.SERVICE_UNAVAILABLE.value()
                ? new DownstreamException(
                        Kind.UNAVAILABLE,
                        "the REST square service at " + replica.baseUrl()
                                + " is unavailable: it answered HTTP 503 for number " + number)
                : badAnswer(replica, number, "HTTP " + status, null);
    }

    /** The square of an answer to a POST, once its payload is known to be the one sent. */
    private static long checkEcho(RestReplicas.Replica replica, int number, Shape shape, byte[] body) {
        EchoJson echo;
        try {
            echo = PayloadJsonCodec.readEcho(body);
        } catch (InvalidPayloadException e) {
            throw badAnswer(
                    replica,
                    number,
                    "'" + abbreviate(new String(body, StandardCharsets.UTF_8)) + "', not the square with its payload ("
                            + e.getMessage() + ")",
                    e);
        }
        String difference = JsonPayloads.difference(shape, number, echo.payload());
        if (difference != null) {
            throw badAnswer(replica, number, "a payload that differs from the one sent (" + difference + ")", null);
        }
        return echo.result();
    }

    private static boolean isUnavailable(Throwable error) {
        return error instanceof DownstreamException downstream && downstream.kind() == Kind.UNAVAILABLE;
    }

    private static long parse(RestReplicas.Replica replica, int number, byte[] body) {
        String text = new String(body, StandardCharsets.UTF_8);
        try {
            return Long.parseLong(text.trim());
        } catch (NumberFormatException e) {
            throw badAnswer(replica, number, "'" + abbreviate(text) + "', not a number", e);
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
