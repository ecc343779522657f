package io.github.squarelab.aggregator.rest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.github.squarelab.aggregator.AggregatorProperties;
import io.github.squarelab.aggregator.fanout.DownstreamException;
import io.github.squarelab.aggregator.fanout.DownstreamException.Kind;
import io.github.squarelab.aggregator.netty.ClientEventLoops;
import io.github.squarelab.aggregator.tls.ClientTls;
import io.github.squarelab.payload.InvalidPayloadException;
import io.github.squarelab.payload.JsonPayloads;
import io.github.squarelab.payload.PayloadJsonCodec;
import io.github.squarelab.payload.Shape;
import io.netty.channel.epoll.Epoll;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import reactor.core.Disposable;

/**
 * The client as configured for the aggregator, against a real HTTP server on a free loopback port whose
 * answers each test chooses.
 */
class RestSquareClientTests {

    /** Generous, so that a busy machine cannot turn a correctness test into a timeout. */
    private static final Duration CALL_DEADLINE = Duration.ofSeconds(10);

    private static final Duration SHORT_DEADLINE = Duration.ofMillis(500);

    private final CountDownLatch releaseSlowAnswers = new CountDownLatch(1);
    /** Each request as "METHOD CONTENT-TYPE BODY". */
    private final List<String> requests = new CopyOnWriteArrayList<>();

    private final ClientEventLoops loops = new ClientEventLoops("test-client");
    private HttpServer server;
    private final List<RestReplicas> replicas = new ArrayList<>();

    @BeforeEach
    void startServer() throws IOException {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.setExecutor(Executors.newCachedThreadPool());
        server.createContext("/rest/square/unary/", exchange -> {
            String number = exchange.getRequestURI().getPath().substring("/rest/square/unary/".length());
            byte[] body = exchange.getRequestBody().readAllBytes();
            requests.add(exchange.getRequestMethod() + " "
                    + exchange.getRequestHeaders().getFirst("Content-Type") + " "
                    + new String(body, StandardCharsets.UTF_8));
            if (exchange.getRequestMethod().equals("POST")) {
                try {
                    answer(exchange, 200, EchoingSquares.answer(Integer.parseInt(number), body));
                } catch (InvalidPayloadException e) {
                    answer(exchange, 400, "{\"detail\":\"" + e.getMessage() + "\"}");
                }
                return;
            }
            switch (number) {
                case "500" -> answer(exchange, 500, "{\"title\":\"Internal Server Error\"}");
                case "13" -> answer(exchange, 200, "thirteen");
                case "14" -> answer(exchange, 200, "");
                case "99" -> {
                    await(releaseSlowAnswers);
                    answer(exchange, 200, "9801");
                }
                default ->
                    answer(exchange, 200, Long.toString((long) Integer.parseInt(number) * Integer.parseInt(number)));
            }
        });
        server.start();
    }

    @AfterEach
    void stopServer() {
        releaseSlowAnswers.countDown();
        server.stop(0);
        replicas.forEach(RestReplicas::dispose);
        loops.close();
    }

    @EachConnector
    void answersTheSquareFromTheService(RestConnector connector) {
        RestSquareClient client = clientFor(connector, baseUrl());

        assertThat(client.square(7, Shape.SMALL).block()).isEqualTo(49L);
        assertThat(client.square(65536, Shape.SMALL).block()).isEqualTo(4_294_967_296L);
        assertThat(client.square(-3, Shape.SMALL).block()).isEqualTo(9L);
    }

    /**
     * Reactor Netty's clients run on the event loops the gRPC channel shares; Jetty's and Apache's on their own, named.
     * java.net.http hands each answer to CompletableFuture's default executor (with one core to spare, a new thread
     * per task), whatever executor it is given.
     */
    @EachConnector
    void answersArriveOnTheEventLoopsItSharesWithTheGrpcChannelOrOnTheClientsOwnNamedThreads(RestConnector connector) {
        RestSquareClient client = clientFor(connector, baseUrl());
        AtomicReference<String> answeredOn = new AtomicReference<>();

        Long square = client.square(7, Shape.SMALL)
                .doOnNext(answer -> answeredOn.set(Thread.currentThread().getName()))
                .block();

        assertThat(square).isEqualTo(49L);
        String loops = "test-client-" + (Epoll.isAvailable() ? "epoll" : "nio") + "-";
        switch (connector) {
            case REACTOR_NETTY, WEBCLIENT -> assertThat(answeredOn.get()).startsWith(loops);
            case JETTY, APACHE -> assertThat(answeredOn.get()).startsWith("square-rest-" + connector.value() + "-");
            case JDK -> assertThat(answeredOn.get()).doesNotStartWith(loops);
        }
    }

    static Stream<Arguments> connectorsAndShapes() {
        return Arrays.stream(RestConnector.values())
                .flatMap(connector -> Arrays.stream(Shape.values()).map(shape -> Arguments.of(connector, shape)));
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("connectorsAndShapes")
    void postsThePayloadOfTheShapeAsJsonAndTakesTheSquareOnceItIsEchoed(RestConnector connector, Shape shape) {
        RestSquareClient client = clientFor(connector, baseUrl());

        assertThat(client.square(7, shape).block()).isEqualTo(49L);
        assertThat(client.square(-3, shape).block()).isEqualTo(9L);

        if (shape.hasPayload()) {
            assertThat(requests)
                    .containsExactly(
                            "POST application/json " + json(shape, 7), "POST application/json " + json(shape, -3));
        } else {
            // The article's call, as before: a GET without a body.
            assertThat(requests).containsExactly("GET null ", "GET null ");
        }
    }

    @EachConnector
    void anEchoOfAnotherPayloadIsABadAnswerSayingWhichNumber(RestConnector connector) {
        assertThatThrownBy(() -> clientFor(connector, baseUrl())
                        .square(EchoingSquares.WRONG_PAYLOAD, Shape.COLLECTION)
                        .block())
                .isInstanceOf(DownstreamException.class)
                .satisfies(e -> assertThat(((DownstreamException) e).kind()).isEqualTo(Kind.BAD_ANSWER))
                .hasMessage("the REST square service at " + baseUrl() + " answered a payload that differs from the one"
                        + " sent (collection[0].name 'item-22-0' where 'item-21-0' was sent) for number 21");
    }

    @EachConnector
    void anAnswerWithoutTheEchoIsABadAnswer(RestConnector connector) {
        assertThatThrownBy(() -> clientFor(connector, baseUrl())
                        .square(EchoingSquares.NO_PAYLOAD, Shape.DEEP)
                        .block())
                .isInstanceOf(DownstreamException.class)
                .satisfies(e -> assertThat(((DownstreamException) e).kind()).isEqualTo(Kind.BAD_ANSWER))
                .hasMessage("the REST square service at " + baseUrl() + " answered '{\"result\":484}', not the square"
                        + " with its payload ('payload' is missing) for number 22");
        assertThatThrownBy(() -> clientFor(connector, baseUrl())
                        .square(EchoingSquares.BARE_SQUARE, Shape.WIDE)
                        .block())
                .isInstanceOf(DownstreamException.class)
                .satisfies(e -> assertThat(((DownstreamException) e).kind()).isEqualTo(Kind.BAD_ANSWER))
                .hasMessage("the REST square service at " + baseUrl() + " answered '529', not the square with its"
                        + " payload (not a JSON object) for number 23");
    }

    /**
     * Under overload thousands of calls wait for one of the pool's connections (its queue is unbounded); a payload is
     * written only once the call has its connection, so the waiting ones hold none. Written before the wait, every
     * waiting collection call held its ~8 KB body and a 128 MiB aggregator ran out of memory with a few hundred
     * clients asking for 8 squares each.
     */
    @EachConnector
    void aCallWaitingForAConnectionHoldsNoPayload(RestConnector connector) throws Exception {
        RestSquareClient client = clientFor(connector, baseUrl());
        List<Disposable> calls = new ArrayList<>();
        try {
            // The pool's 4 connections, each held by an answer that does not come.
            for (int i = 0; i < 4; i++) {
                calls.add(client.square(99, Shape.SMALL).subscribe(square -> {}, error -> {}));
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (requests.size() < 4 && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            assertThat(requests).hasSize(4);
            int waiting = 5_000;
            long before = usedHeapAfterGc();
            for (int i = 0; i < waiting; i++) {
                // Ten-digit numbers: the largest collections, about 8 KB of JSON each.
                calls.add(client.square(-2_000_000_000 - i, Shape.COLLECTION).subscribe(square -> {}, error -> {}));
            }
            long perCall = (usedHeapAfterGc() - before) / waiting;

            assertThat(requests).as("no waiting call has reached the server").hasSize(4);
            assertThat(perCall).as("heap bytes a waiting call holds").isLessThan(6_000);
        } finally {
            calls.forEach(Disposable::dispose);
        }
    }

    private static long usedHeapAfterGc() throws InterruptedException {
        for (int i = 0; i < 3; i++) {
            System.gc();
            Thread.sleep(50);
        }
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }

    @EachConnector
    void anErrorStatusIsABadAnswer(RestConnector connector) {
        assertThatThrownBy(() ->
                        clientFor(connector, baseUrl()).square(500, Shape.SMALL).block())
                .isInstanceOf(DownstreamException.class)
                .satisfies(e -> assertThat(((DownstreamException) e).kind()).isEqualTo(Kind.BAD_ANSWER))
                .hasMessage("the REST square service at " + baseUrl() + " answered HTTP 500 for number 500");
    }

    @EachConnector
    void aBodyThatIsNotANumberIsABadAnswer(RestConnector connector) {
        assertThatThrownBy(() ->
                        clientFor(connector, baseUrl()).square(13, Shape.SMALL).block())
                .isInstanceOf(DownstreamException.class)
                .satisfies(e -> assertThat(((DownstreamException) e).kind()).isEqualTo(Kind.BAD_ANSWER))
                .hasMessage(
                        "the REST square service at " + baseUrl() + " answered 'thirteen', not a number for number 13");
        assertThatThrownBy(() ->
                        clientFor(connector, baseUrl()).square(14, Shape.SMALL).block())
                .isInstanceOf(DownstreamException.class)
                .hasMessage("the REST square service at " + baseUrl() + " answered an empty body for number 14");
    }

    @EachConnector
    void aSlowAnswerTimesOutAtTheCallDeadline(RestConnector connector) {
        long start = System.nanoTime();
        assertThatThrownBy(() -> clientFor(connector, baseUrl(), SHORT_DEADLINE)
                        .square(99, Shape.SMALL)
                        .block(Duration.ofSeconds(5)))
                .isInstanceOf(DownstreamException.class)
                .satisfies(e -> assertThat(((DownstreamException) e).kind()).isEqualTo(Kind.TIMEOUT))
                .hasMessage("no answer from the REST square service at " + baseUrl()
                        + " for number 99 within 500 ms (aggregator.call-deadline)");
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(3));
    }

    @EachConnector
    void aClosedPortIsUnavailableAtOnce(RestConnector connector) throws IOException {
        String closed = "http://127.0.0.1:" + freePort();
        long start = System.nanoTime();
        assertThatThrownBy(() ->
                        clientFor(connector, closed).square(7, Shape.SMALL).block(Duration.ofSeconds(5)))
                .isInstanceOf(DownstreamException.class)
                .satisfies(e -> assertThat(((DownstreamException) e).kind()).isEqualTo(Kind.UNAVAILABLE))
                .hasMessageStartingWith("the REST square service at " + closed + " is unreachable: ");
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(2));
    }

    private RestSquareClient clientFor(RestConnector connector, String baseUrl) {
        return clientFor(connector, baseUrl, CALL_DEADLINE);
    }

    private RestSquareClient clientFor(RestConnector connector, String baseUrl, Duration callDeadline) {
        AggregatorProperties properties = new AggregatorProperties(
                100_000,
                8,
                Duration.ofSeconds(30),
                callDeadline,
                new AggregatorProperties.Rest(
                        List.of(URI.create(baseUrl)),
                        4,
                        2,
                        connector.value(),
                        AggregatorProperties.Rest.DEFAULT_CLIENT),
                new AggregatorProperties.Grpc("unused:1"),
                new AggregatorProperties.Admission(0, 0, 0, Duration.ofSeconds(1), Duration.ofMillis(500), 0.5));
        RestClientConfiguration configuration = new RestClientConfiguration();
        RestReplicas replicas = configuration.squareRestReplicas(properties, loops, ClientTls.plaintext());
        this.replicas.add(replicas);
        return configuration.restSquareClient(replicas, properties);
    }

    private String baseUrl() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }

    private static String json(Shape shape, int number) {
        return new String(PayloadJsonCodec.write(JsonPayloads.of(shape, number)), StandardCharsets.UTF_8);
    }

    private static void answer(HttpExchange exchange, int status, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", "application/json");
        exchange.sendResponseHeaders(status, bytes.length == 0 ? -1 : bytes.length);
        exchange.getResponseBody().write(bytes);
        exchange.close();
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
