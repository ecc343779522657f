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
import reactor.netty.http.client.HttpClient;

/**
 * {@code GET /rest/square/unary/{number}} on the REST square service, over pooled keep-alive HTTP/1.1
 * connections. Reactor Netty's client is used directly: WebClient would add a request object, filters
 * and a codec lookup to every call, for a body that is one number.
 */
public class RestSquareClient implements UnarySquareClient {

    private static final String PATH = "/rest/square/unary/";

    private final HttpClient http;
    private final String service;
    private final Duration callDeadline;

    /**
     * @param http a client whose base URL is the square service, and whose pool and response timeout
     *     enforce the per-call deadline
     * @param service how to name the service in error messages, e.g. its base URL
     * @param callDeadline the deadline those timeouts enforce, for error messages
     */
    public RestSquareClient(HttpClient http, String service, Duration callDeadline) {
        this.http = http;
        this.service = service;
        this.callDeadline = callDeadline;
    }

    @Override
    public Transport transport() {
        return Transport.REST_UNARY;
    }

    @Override
    public Mono<Long> square(int number) {
        return http.get()
            .uri(PATH + number)
            .responseSingle((response, body) -> response.status().equals(HttpResponseStatus.OK)
                ? body.asString()
                : Mono.error(badAnswer(number, "HTTP " + response.status().code(), null)))
            .switchIfEmpty(Mono.error(() -> badAnswer(number, "an empty body", null)))
            .map(body -> parse(number, body))
            .onErrorMap(error -> !(error instanceof DownstreamException), error -> translate(number, error));
    }

    private long parse(int number, String body) {
        try {
            return Long.parseLong(body.trim());
        } catch (NumberFormatException e) {
            throw badAnswer(number, "'" + abbreviate(body) + "', not a number", e);
        }
    }

    private DownstreamException translate(int number, Throwable error) {
        if (isTimeout(error)) {
            return new DownstreamException(Kind.TIMEOUT, "no answer from the REST square service at " + service
                + " for number " + number + " within " + callDeadline.toMillis() + " ms (aggregator.call-deadline)",
                error);
        }
        // Refused, reset or closed before the answer: the service is down or going away.
        return new DownstreamException(Kind.UNAVAILABLE, "the REST square service at " + service
            + " is unreachable: " + rootMessage(error), error);
    }

    private static boolean isTimeout(Throwable error) {
        for (Throwable t = error; t != null; t = t.getCause()) {
            // TimeoutException also covers waiting too long for a pooled connection.
            if (t instanceof ReadTimeoutException || t instanceof TimeoutException) {
                return true;
            }
        }
        return false;
    }

    private DownstreamException badAnswer(int number, String what, Throwable cause) {
        return new DownstreamException(Kind.BAD_ANSWER, "the REST square service at " + service
            + " answered " + what + " for number " + number, cause);
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
