package io.github.squarelab.aggregator.rest;

import io.github.squarelab.aggregator.fanout.DownstreamException;
import io.github.squarelab.aggregator.fanout.DownstreamException.Kind;
import io.github.squarelab.aggregator.fanout.Transport;
import io.github.squarelab.aggregator.fanout.UnarySquareClient;
import io.netty.handler.timeout.ReadTimeoutException;
import java.time.Duration;
import java.util.concurrent.TimeoutException;
import org.springframework.web.reactive.function.client.WebClient;
import org.springframework.web.reactive.function.client.WebClientRequestException;
import org.springframework.web.reactive.function.client.WebClientResponseException;
import reactor.core.publisher.Mono;

/** {@code GET /rest/square/unary/{number}} on the REST square service, over pooled keep-alive connections. */
public class RestSquareClient implements UnarySquareClient {

    private static final String PATH = "/rest/square/unary/";

    private final WebClient webClient;
    private final String service;
    private final Duration callDeadline;

    /**
     * @param webClient a client whose base URL is the square service, and whose connector enforces the
     *     per-call deadline (response timeout and pool acquire timeout)
     * @param service how to name the service in error messages, e.g. its base URL
     * @param callDeadline the deadline those timeouts enforce, for error messages
     */
    public RestSquareClient(WebClient webClient, String service, Duration callDeadline) {
        this.webClient = webClient;
        this.service = service;
        this.callDeadline = callDeadline;
    }

    @Override
    public Transport transport() {
        return Transport.REST_UNARY;
    }

    @Override
    public Mono<Long> square(int number) {
        return webClient.get()
            .uri(PATH + number)
            .retrieve()
            .bodyToMono(String.class)
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
        if (error instanceof WebClientResponseException response) {
            return badAnswer(number, "HTTP " + response.getStatusCode().value(), error);
        }
        if (isTimeout(error)) {
            return new DownstreamException(Kind.TIMEOUT, "no answer from the REST square service at " + service
                + " for number " + number + " within " + callDeadline.toMillis() + " ms (aggregator.call-deadline)",
                error);
        }
        if (error instanceof WebClientRequestException) {
            // Refused, reset or closed before the answer: the service is down or going away.
            return new DownstreamException(Kind.UNAVAILABLE, "the REST square service at " + service
                + " is unreachable: " + rootMessage(error), error);
        }
        return badAnswer(number, rootMessage(error), error);
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
