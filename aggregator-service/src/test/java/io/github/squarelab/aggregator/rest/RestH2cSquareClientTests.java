package io.github.squarelab.aggregator.rest;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.squarelab.aggregator.AggregatorProperties;
import io.github.squarelab.aggregator.fanout.Transport;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.HttpProtocol;
import reactor.netty.http.server.HttpServer;

/** rest/h2c's client against a real HTTP/2 cleartext server: many calls at once, on few connections. */
class RestH2cSquareClientTests {

    private final Set<String> protocols = ConcurrentHashMap.newKeySet();
    private final Set<String> connections = ConcurrentHashMap.newKeySet();
    private DisposableServer server;
    private RestReplicas replicas;

    @BeforeEach
    void startServer() {
        // Answers each square 20 ms late, so that the calls of one burst are under way together.
        server = HttpServer.create()
                .host("127.0.0.1")
                .port(0)
                .protocol(HttpProtocol.H2C)
                .route(routes -> routes.get("/rest/square/unary/{number}", (request, response) -> {
                    protocols.add(request.version().text());
                    connections.add(String.valueOf(request.remoteAddress()));
                    long number = Long.parseLong(request.param("number"));
                    return response.sendString(
                            Mono.just(Long.toString(number * number)).delayElement(Duration.ofMillis(20)));
                }))
                .bindNow();
    }

    @AfterEach
    void stop() {
        if (replicas != null) {
            replicas.dispose();
        }
        server.disposeNow();
    }

    @Test
    void multiplexesManyCallsOnTheConfiguredConnectionsOverHttp2() {
        RestSquareClient client = clientWithConnections(2);

        List<Long> squares =
                Flux.range(1, 400).flatMap(client::square, 400).collectList().block(Duration.ofSeconds(30));

        assertThat(squares).hasSize(400).contains(1L, 4L, 160_000L);
        assertThat(client.transport()).isEqualTo(Transport.REST_H2C);
        assertThat(protocols).containsExactly("HTTP/2.0");
        assertThat(connections).hasSizeBetween(1, 2);
    }

    private RestSquareClient clientWithConnections(int h2cConnections) {
        AggregatorProperties properties = new AggregatorProperties(
                100_000,
                8,
                Duration.ofSeconds(30),
                Duration.ofSeconds(10),
                new AggregatorProperties.Rest(
                        List.of(URI.create("http://127.0.0.1:" + server.port())), 4, h2cConnections),
                new AggregatorProperties.Grpc("unused:1"),
                new AggregatorProperties.Admission(0, Duration.ofSeconds(1)));
        RestClientConfiguration configuration = new RestClientConfiguration();
        replicas = configuration.squareRestH2cReplicas(properties);
        return configuration.restH2cSquareClient(replicas, properties);
    }
}
