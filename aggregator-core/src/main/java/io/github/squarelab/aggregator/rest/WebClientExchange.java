package io.github.squarelab.aggregator.rest;

import java.net.URI;
import java.time.Duration;
import java.util.function.Supplier;
import org.springframework.http.MediaType;
import org.springframework.http.client.reactive.ClientHttpConnector;
import org.springframework.web.reactive.function.BodyInserters;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.publisher.Mono;

/**
 * Spring's WebClient over any {@link ClientHttpConnector}, to one replica. With a {@link CallLimit}, calls beyond it
 * wait before WebClient builds their request; with a deadline, a call is cut off there (the Reactor Netty client
 * bounds its own calls).
 */
final class WebClientExchange implements RestExchange {

    private final String baseUrl;
    private final WebClient client;
    private final CallLimit limit;
    private final Duration deadline;
    private final AutoCloseable resources;

    /**
     * @param baseUrl the replica
     * @param connector the HTTP client WebClient calls through
     * @param limit calls at once, or null if the client's own pool waits without the request
     * @param deadline the call deadline, or null if the client enforces it
     * @param resources closes the client's connections and threads
     */
    WebClientExchange(
            String baseUrl,
            ClientHttpConnector connector,
            CallLimit limit,
            Duration deadline,
            AutoCloseable resources) {
        this.baseUrl = baseUrl;
        this.client = WebClient.builder().clientConnector(connector).build();
        this.limit = limit;
        this.deadline = deadline;
        this.resources = resources;
    }

    @Override
    public Mono<Answer> get(String path) {
        return bounded(() -> client.get().uri(URI.create(baseUrl + path)).exchangeToMono(WebClientExchange::answer));
    }

    /**
     * The connectors build the request, body and all, when WebClient hands it over, some before they wait for a
     * connection: so the body is made then, and a CallLimit keeps calls waiting before that.
     */
    @Override
    public Mono<Answer> post(String path, Supplier<byte[]> json) {
        return bounded(() -> client.post()
                .uri(URI.create(baseUrl + path))
                .contentType(MediaType.APPLICATION_JSON)
                // A Mono: WebClient writes it as one buffer with its Content-Length.
                .body(BodyInserters.fromPublisher(Mono.fromSupplier(json), byte[].class))
                .exchangeToMono(WebClientExchange::answer));
    }

    /** The request is assembled only once the call starts: a waiting call holds no more than its number. */
    private Mono<Answer> bounded(Supplier<Mono<Answer>> call) {
        Mono<Answer> deferred = Mono.defer(call);
        Mono<Answer> limited = limit == null ? deferred : limit.run(deferred);
        return deadline == null ? limited : limited.timeout(deadline);
    }

    private static Mono<Answer> answer(ClientResponse response) {
        int status = response.statusCode().value();
        if (status != 200) {
            return response.releaseBody().thenReturn(new Answer(status, NO_BODY));
        }
        return response.bodyToMono(byte[].class)
                .map(body -> new Answer(200, body))
                .defaultIfEmpty(new Answer(200, NO_BODY));
    }

    @Override
    public void close() {
        try {
            resources.close();
        } catch (Exception e) {
            throw new IllegalStateException("could not close the REST client of " + baseUrl, e);
        }
    }
}
