package io.github.squarelab.aggregator.rest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.github.squarelab.aggregator.AggregatorProperties;
import io.github.squarelab.aggregator.fanout.DownstreamException;
import io.github.squarelab.aggregator.fanout.DownstreamException.Kind;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The client as configured for the aggregator, against a real HTTP server on a free loopback port whose
 * answers each test chooses.
 */
class RestSquareClientTests {

    /** Generous, so that a busy machine cannot turn a correctness test into a timeout. */
    private static final Duration CALL_DEADLINE = Duration.ofSeconds(10);

    private static final Duration SHORT_DEADLINE = Duration.ofMillis(500);

    private final CountDownLatch releaseSlowAnswers = new CountDownLatch(1);
    private HttpServer server;
    private RestReplicas replicas;

    @BeforeEach
    void startServer() throws IOException {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.setExecutor(Executors.newCachedThreadPool());
        server.createContext("/rest/square/unary/", exchange -> {
            String number = exchange.getRequestURI().getPath().substring("/rest/square/unary/".length());
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
        if (replicas != null) {
            replicas.dispose();
        }
    }

    @Test
    void answersTheSquareFromTheService() {
        RestSquareClient client = clientFor(baseUrl());

        assertThat(client.square(7).block()).isEqualTo(49L);
        assertThat(client.square(65536).block()).isEqualTo(4_294_967_296L);
        assertThat(client.square(-3).block()).isEqualTo(9L);
    }

    @Test
    void anErrorStatusIsABadAnswer() {
        assertThatThrownBy(() -> clientFor(baseUrl()).square(500).block())
                .isInstanceOf(DownstreamException.class)
                .satisfies(e -> assertThat(((DownstreamException) e).kind()).isEqualTo(Kind.BAD_ANSWER))
                .hasMessage("the REST square service at " + baseUrl() + " answered HTTP 500 for number 500");
    }

    @Test
    void aBodyThatIsNotANumberIsABadAnswer() {
        assertThatThrownBy(() -> clientFor(baseUrl()).square(13).block())
                .isInstanceOf(DownstreamException.class)
                .satisfies(e -> assertThat(((DownstreamException) e).kind()).isEqualTo(Kind.BAD_ANSWER))
                .hasMessage(
                        "the REST square service at " + baseUrl() + " answered 'thirteen', not a number for number 13");
        assertThatThrownBy(() -> clientFor(baseUrl()).square(14).block())
                .isInstanceOf(DownstreamException.class)
                .hasMessage("the REST square service at " + baseUrl() + " answered an empty body for number 14");
    }

    @Test
    void aSlowAnswerTimesOutAtTheCallDeadline() {
        long start = System.nanoTime();
        assertThatThrownBy(() -> clientFor(baseUrl(), SHORT_DEADLINE).square(99).block(Duration.ofSeconds(5)))
                .isInstanceOf(DownstreamException.class)
                .satisfies(e -> assertThat(((DownstreamException) e).kind()).isEqualTo(Kind.TIMEOUT))
                .hasMessage("no answer from the REST square service at " + baseUrl()
                        + " for number 99 within 500 ms (aggregator.call-deadline)");
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(3));
    }

    @Test
    void aClosedPortIsUnavailableAtOnce() throws IOException {
        String closed = "http://127.0.0.1:" + freePort();
        long start = System.nanoTime();
        assertThatThrownBy(() -> clientFor(closed).square(7).block(Duration.ofSeconds(5)))
                .isInstanceOf(DownstreamException.class)
                .satisfies(e -> assertThat(((DownstreamException) e).kind()).isEqualTo(Kind.UNAVAILABLE))
                .hasMessageStartingWith("the REST square service at " + closed + " is unreachable: ");
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(2));
    }

    private RestSquareClient clientFor(String baseUrl) {
        return clientFor(baseUrl, CALL_DEADLINE);
    }

    private RestSquareClient clientFor(String baseUrl, Duration callDeadline) {
        AggregatorProperties properties = new AggregatorProperties(
                100_000,
                8,
                Duration.ofSeconds(30),
                callDeadline,
                new AggregatorProperties.Rest(List.of(URI.create(baseUrl)), 4, 2),
                new AggregatorProperties.Grpc("unused:1"),
                new AggregatorProperties.Admission(0, Duration.ofSeconds(1)));
        RestClientConfiguration configuration = new RestClientConfiguration();
        replicas = configuration.squareRestReplicas(properties);
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
