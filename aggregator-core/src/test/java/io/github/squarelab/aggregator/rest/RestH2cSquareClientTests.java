package io.github.squarelab.aggregator.rest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.squarelab.aggregator.AggregatorProperties;
import io.github.squarelab.aggregator.fanout.DownstreamException;
import io.github.squarelab.aggregator.fanout.DownstreamException.Kind;
import io.github.squarelab.aggregator.fanout.Transport;
import io.github.squarelab.aggregator.netty.ClientEventLoops;
import io.github.squarelab.aggregator.tls.ClientTls;
import io.github.squarelab.payload.InvalidPayloadException;
import io.github.squarelab.payload.Shape;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.HttpProtocol;
import reactor.netty.http.server.HttpServer;
import reactor.netty.http.server.HttpServerResponse;

/**
 * rest/h2c's client as configured for the aggregator, against real servers that speak only HTTP/2 cleartext
 * with prior knowledge: many calls at once on few connections, and the same failures, deadlines and failover
 * as over HTTP/1.1.
 */
class RestH2cSquareClientTests {

    /** Generous, so that a busy machine cannot turn a correctness test into a timeout. */
    private static final Duration CALL_DEADLINE = Duration.ofSeconds(10);

    private final List<H2cSquareServer> servers = new ArrayList<>();
    private final ClientEventLoops loops = new ClientEventLoops("test-client");
    private RestReplicas replicas;

    @AfterEach
    void stop() {
        if (replicas != null) {
            replicas.dispose();
        }
        loops.close();
        servers.forEach(server -> server.server.disposeNow());
    }

    @EachH2cConnector
    void multiplexesManyCallsAtOnceOnTheConfiguredConnectionsOverHttp2(RestConnector connector) {
        H2cSquareServer server = start(200, Duration.ofMillis(200));
        RestSquareClient client = clientFor(connector, CALL_DEADLINE, 2, server.baseUrl());

        // Above the numbers the server answers wrongly on purpose.
        List<Long> squares = Flux.range(1001, 400)
                .flatMapSequential(number -> client.square(number, Shape.SMALL), 400)
                .collectList()
                .block(Duration.ofSeconds(30));

        assertThat(squares).hasSize(400).startsWith(1_002_001L, 1_004_004L).endsWith(1_960_000L);
        assertThat(client.transport()).isEqualTo(Transport.REST_H2C);
        assertThat(server.protocols).containsExactly("HTTP/2.0");
        assertThat(server.connections).hasSizeBetween(1, 2);
        // Each answer waits 200 ms: calls one after another on each of two connections would overlap by 2 at most.
        assertThat(server.mostInFlight.get()).isGreaterThan(50);
    }

    @EachH2cConnector
    void postsPayloadsOverHttp2AndChecksEachEcho(RestConnector connector) {
        H2cSquareServer server = start(200);
        String baseUrl = server.baseUrl();
        RestSquareClient client = clientFor(connector, CALL_DEADLINE, 2, baseUrl);

        List<Long> squares = Flux.range(1, 20)
                .flatMapSequential(number -> client.square(number, Shape.COLLECTION), 20)
                .collectList()
                .block(Duration.ofSeconds(30));

        assertThat(squares).hasSize(20).startsWith(1L, 4L).endsWith(400L);
        assertThat(server.protocols).containsExactly("HTTP/2.0");
        assertThat(server.contentTypes).containsExactly("application/json");
        assertThat(client.square(7, Shape.WIDE).block()).isEqualTo(49L);
        assertThatThrownBy(() ->
                        client.square(EchoingSquares.WRONG_PAYLOAD, Shape.DEEP).block())
                .isInstanceOf(DownstreamException.class)
                .satisfies(e -> assertThat(((DownstreamException) e).kind()).isEqualTo(Kind.BAD_ANSWER))
                .hasMessage("the REST square service at " + baseUrl + " answered a payload that differs from the one"
                        + " sent (deep.name 'item-22-0' where 'item-21-0' was sent) for number 21");
        assertThatThrownBy(() ->
                        client.square(EchoingSquares.NO_PAYLOAD, Shape.DEEP).block())
                .isInstanceOf(DownstreamException.class)
                .hasMessage("the REST square service at " + baseUrl + " answered '{\"result\":484}', not the square"
                        + " with its payload ('payload' is missing) for number 22");
    }

    @EachH2cConnector
    void answersTheSquareFromTheService(RestConnector connector) {
        RestSquareClient client =
                clientFor(connector, CALL_DEADLINE, 2, start(200).baseUrl());

        assertThat(client.square(7, Shape.SMALL).block()).isEqualTo(49L);
        assertThat(client.square(65536, Shape.SMALL).block()).isEqualTo(4_294_967_296L);
        assertThat(client.square(-3, Shape.SMALL).block()).isEqualTo(9L);
    }

    @EachH2cConnector
    void anErrorStatusOrABodyThatIsNotANumberIsABadAnswer(RestConnector connector) {
        String baseUrl = start(200).baseUrl();
        RestSquareClient client = clientFor(connector, CALL_DEADLINE, 2, baseUrl);

        assertThatThrownBy(() -> client.square(500, Shape.SMALL).block())
                .isInstanceOf(DownstreamException.class)
                .satisfies(e -> assertThat(((DownstreamException) e).kind()).isEqualTo(Kind.BAD_ANSWER))
                .hasMessage("the REST square service at " + baseUrl + " answered HTTP 500 for number 500");
        assertThatThrownBy(() -> client.square(13, Shape.SMALL).block())
                .isInstanceOf(DownstreamException.class)
                .satisfies(e -> assertThat(((DownstreamException) e).kind()).isEqualTo(Kind.BAD_ANSWER))
                .hasMessage(
                        "the REST square service at " + baseUrl + " answered 'thirteen', not a number for number 13");
    }

    @EachH2cConnector
    void aSlowAnswerTimesOutAtTheCallDeadline(RestConnector connector) {
        String baseUrl = start(200).baseUrl();
        RestSquareClient impatient = clientFor(connector, Duration.ofMillis(500), 2, baseUrl);

        long start = System.nanoTime();
        assertThatThrownBy(() -> impatient.square(99, Shape.SMALL).block(Duration.ofSeconds(5)))
                .isInstanceOf(DownstreamException.class)
                .satisfies(e -> assertThat(((DownstreamException) e).kind()).isEqualTo(Kind.TIMEOUT))
                .hasMessage("no answer from the REST square service at " + baseUrl
                        + " for number 99 within 500 ms (aggregator.call-deadline)");
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(3));
    }

    @EachH2cConnector
    void aClosedPortIsUnavailableAtOnce(RestConnector connector) throws IOException {
        String closed = "http://127.0.0.1:" + freePort();

        long start = System.nanoTime();
        assertThatThrownBy(() -> clientFor(connector, CALL_DEADLINE, 2, closed)
                        .square(7, Shape.SMALL)
                        .block(Duration.ofSeconds(5)))
                .isInstanceOf(DownstreamException.class)
                .satisfies(e -> assertThat(((DownstreamException) e).kind()).isEqualTo(Kind.UNAVAILABLE))
                .hasMessageStartingWith("the REST square service at " + closed + " is unreachable: ");
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(2));
    }

    @EachH2cConnector
    void aReplicaThatAnswers503IsUnavailableAndTheCallIsRetriedOnTheOther(RestConnector connector) {
        H2cSquareServer shuttingDown = start(503);
        H2cSquareServer healthy = start(200);
        RestSquareClient client = clientFor(connector, CALL_DEADLINE, 2, shuttingDown.baseUrl(), healthy.baseUrl());

        assertThat(client.square(7, Shape.SMALL).block()).isEqualTo(49L);

        assertThat(shuttingDown.calls).hasValue(1);
        assertThat(healthy.calls).hasValue(1);
    }

    @EachH2cConnector
    void aCallToAReplicaThatRefusesIsRetriedOnTheOtherAndTheRefusingOneIsPassedOver(RestConnector connector)
            throws IOException {
        H2cSquareServer healthy = start(200);
        RestSquareClient client =
                clientFor(connector, CALL_DEADLINE, 2, "http://127.0.0.1:" + freePort(), healthy.baseUrl());

        for (int i = 1; i <= 10; i++) {
            assertThat(client.square(i, Shape.SMALL).block()).isEqualTo((long) i * i);
        }

        assertThat(healthy.calls).hasValue(10);
        assertThat(replicas.next())
                .as("the refusing replica is passed over")
                .isSameAs(replicas.all().get(1));
    }

    private RestSquareClient clientFor(
            RestConnector connector, Duration callDeadline, int h2cConnections, String... baseUrls) {
        AggregatorProperties properties = new AggregatorProperties(
                100_000,
                8,
                Duration.ofSeconds(30),
                callDeadline,
                new AggregatorProperties.Rest(
                        Arrays.stream(baseUrls).map(URI::create).toList(),
                        4,
                        h2cConnections,
                        AggregatorProperties.Rest.DEFAULT_CLIENT,
                        connector.value()),
                new AggregatorProperties.Grpc("unused:1"),
                new AggregatorProperties.Admission(0, 0, 0, Duration.ofSeconds(1), Duration.ofMillis(500), 0.5));
        RestClientConfiguration configuration = new RestClientConfiguration();
        replicas = configuration.squareRestH2cReplicas(properties, loops, ClientTls.plaintext());
        return configuration.restH2cSquareClient(replicas, properties);
    }

    private H2cSquareServer start(int status) {
        return start(status, Duration.ZERO);
    }

    private H2cSquareServer start(int status, Duration delay) {
        H2cSquareServer server = new H2cSquareServer(status, delay);
        servers.add(server);
        return server;
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }

    /**
     * A square service on a loopback port that speaks HTTP/2 cleartext with prior knowledge only (no HTTP/1.1,
     * no upgrade). Answers {@code status}; with 200, each square {@code delay} late, except 500 (an error
     * status), 13 (not a number) and 99 (never). Records what its calls came over, and the most at once.
     */
    private static final class H2cSquareServer {

        final AtomicInteger calls = new AtomicInteger();
        final AtomicInteger mostInFlight = new AtomicInteger();
        final Set<String> protocols = ConcurrentHashMap.newKeySet();
        final Set<String> connections = ConcurrentHashMap.newKeySet();
        final Set<String> contentTypes = ConcurrentHashMap.newKeySet();
        private final AtomicInteger inFlight = new AtomicInteger();
        private final int status;
        private final Duration delay;
        final DisposableServer server;

        H2cSquareServer(int status, Duration delay) {
            this.status = status;
            this.delay = delay;
            this.server = HttpServer.create()
                    .host("127.0.0.1")
                    .port(0)
                    .protocol(HttpProtocol.H2C)
                    // Far more than the client opens on a connection, so that the client's limit is what shows.
                    .http2Settings(settings -> settings.maxConcurrentStreams(10_000))
                    .route(routes -> routes.get("/rest/square/unary/{number}", (request, response) -> {
                                calls.incrementAndGet();
                                protocols.add(request.version().text());
                                // An HTTP/2 stream's remote address is its connection's.
                                connections.add(String.valueOf(request.remoteAddress()));
                                return answer(request.param("number"), response);
                            })
                            .post("/rest/square/unary/{number}", (request, response) -> {
                                calls.incrementAndGet();
                                protocols.add(request.version().text());
                                contentTypes.add(request.requestHeaders().get("content-type"));
                                return request.receive()
                                        .aggregate()
                                        .asByteArray()
                                        .flatMap(body -> {
                                            try {
                                                return response.sendString(Mono.just(EchoingSquares.answer(
                                                                Integer.parseInt(request.param("number")), body)))
                                                        .then();
                                            } catch (InvalidPayloadException e) {
                                                return response.status(400)
                                                        .sendString(Mono.just(e.getMessage()))
                                                        .then();
                                            }
                                        });
                            }))
                    .bindNow();
        }

        String baseUrl() {
            return "http://127.0.0.1:" + server.port();
        }

        private Publisher<Void> answer(String number, HttpServerResponse response) {
            if (status != 200) {
                return response.status(status).sendString(Mono.just("{\"status\":" + status + "}"));
            }
            return switch (number) {
                case "500" -> response.status(500).sendString(Mono.just("{\"title\":\"Internal Server Error\"}"));
                case "13" -> response.sendString(Mono.just("thirteen"));
                case "99" -> Mono.never();
                default -> {
                    long value = Long.parseLong(number);
                    mostInFlight.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
                    yield response.sendString(Mono.just(Long.toString(value * value))
                            .delayElement(delay)
                            .doOnNext(square -> inFlight.decrementAndGet()));
                }
            };
        }
    }
}
