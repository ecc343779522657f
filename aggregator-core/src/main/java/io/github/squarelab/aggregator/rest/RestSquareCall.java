package io.github.squarelab.aggregator.rest;

import io.github.squarelab.aggregator.fanout.DownstreamException;
import io.github.squarelab.aggregator.fanout.DownstreamException.Kind;
import io.github.squarelab.aggregator.tls.TlsFailures;
import io.github.squarelab.payload.EchoJson;
import io.github.squarelab.payload.InvalidPayloadException;
import io.github.squarelab.payload.JsonPayloads;
import io.github.squarelab.payload.PayloadJsonCodec;
import io.github.squarelab.payload.Shape;
import io.netty.handler.timeout.ReadTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeoutException;
import org.springframework.http.HttpStatus;
import reactor.core.publisher.Mono;

/**
 * One square call to one replica, with no policy of its own ({@link RestSquareClient} has it): the article's GET, or a
 * POST of the shape's payload, written only once the call is under way so that queued calls hold none, and its echo
 * read strictly and checked in place.
 */
final class RestSquareCall {

    private static final String PATH = "/rest/square/unary/";

    private final Duration callDeadline;

    /** @param callDeadline the deadline the replicas' clients enforce, for error messages */
    RestSquareCall(Duration callDeadline) {
        this.callDeadline = callDeadline;
    }

    /**
     * One call to one replica: the GET, or with a payload the POST; {@code budget}, if given, is what is left of the
     * call's deadline. Fails with a {@link DownstreamException} that says what went wrong.
     */
    Mono<Long> square(RestReplicas.Replica replica, int number, Shape shape, Duration budget) {
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
        replica.answered();
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
        Optional<String> tls = TlsFailures.handshake(error);
        if (tls.isPresent()) {
            return new DownstreamException(
                    Kind.UNAVAILABLE,
                    "the REST square service at " + replica.baseUrl() + " failed the TLS handshake: " + tls.get(),
                    error);
        }
        // Refused, reset or closed before the answer: the replica is down or going away, or a TLS port that a plaintext
        // client reached, which never answers it.
        boolean plaintext = replica.baseUrl().startsWith("http:");
        return new DownstreamException(
                Kind.UNAVAILABLE,
                "the REST square service at " + replica.baseUrl() + " is unreachable: " + rootMessage(error)
                        + (plaintext && !replica.hasAnswered() && !TlsFailures.refused(error)
                                ? TlsFailures.PLAINTEXT_HINT
                                : ""),
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
