package io.github.squarelab.aggregator.rest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpServer;
import io.github.squarelab.aggregator.AggregatorProperties;
import io.github.squarelab.aggregator.fanout.DownstreamException;
import io.github.squarelab.aggregator.fanout.DownstreamException.Kind;
import io.github.squarelab.aggregator.netty.ClientEventLoops;
import io.github.squarelab.aggregator.tls.ClientTls;
import io.github.squarelab.payload.Shape;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;

/**
 * The REST client as configured for the aggregator with a list of base URLs, in front of real HTTP servers
 * on loopback ports: calls taken in turn, one retry on another replica when one is unavailable, none on a
 * timeout.
 */
class RestReplicasTests {

    private static final Duration CALL_DEADLINE = Duration.ofSeconds(10);

    private final CountDownLatch release = new CountDownLatch(1);
    private final List<HttpServer> servers = new ArrayList<>();
    private final ClientEventLoops loops = new ClientEventLoops("test-client");
    private RestReplicas replicas;

    @AfterEach
    void stop() {
        release.countDown();
        servers.forEach(server -> server.stop(0));
        if (replicas != null) {
            replicas.dispose();
        }
        loops.close();
    }

    @EachConnector
    void callsAreTakenInTurnByEveryReplica(RestConnector connector) throws IOException {
        Replica a = new Replica(200);
        Replica b = new Replica(200);
        RestSquareClient client = clientFor(connector, CALL_DEADLINE, start(a), start(b));

        for (int i = 1; i <= 20; i++) {
            assertThat(client.square(i, Shape.SMALL).block()).isEqualTo((long) i * i);
        }

        assertThat(a.calls).hasValue(10);
        assertThat(b.calls).hasValue(10);
    }

    @EachConnector
    void aCallToAReplicaThatRefusesIsRetriedOnTheOtherAndTheRefusingOneIsPassedOver(RestConnector connector)
            throws IOException {
        Replica healthy = new Replica(200);
        RestSquareClient client = clientFor(connector, CALL_DEADLINE, "http://127.0.0.1:" + freePort(), start(healthy));

        long start = System.nanoTime();
        for (int i = 1; i <= 10; i++) {
            assertThat(client.square(i, Shape.SMALL).block()).isEqualTo((long) i * i);
        }

        assertThat(healthy.calls).hasValue(10);
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(2));
        assertThat(replicas.nextOtherThan(null))
                .as("the refusing replica is passed over")
                .isSameAs(replicas.all().get(1));
        assertThat(replicas.next()).isSameAs(replicas.all().get(1));
    }

    @EachConnector
    void aReplicaThatAnswers503IsUnavailableAndTheCallIsRetriedOnTheOther(RestConnector connector) throws IOException {
        Replica shuttingDown = new Replica(503);
        Replica healthy = new Replica(200);
        RestSquareClient client = clientFor(connector, CALL_DEADLINE, start(shuttingDown), start(healthy));

        assertThat(client.square(7, Shape.SMALL).block()).isEqualTo(49L);

        assertThat(shuttingDown.calls).hasValue(1);
        assertThat(healthy.calls).hasValue(1);
    }

    @EachConnector
    void whenEveryReplicaIsUnavailableTheCallFailsNamingTheLastOneTried(RestConnector connector) throws IOException {
        String closedA = "http://127.0.0.1:" + freePort();
        String closedB = "http://127.0.0.1:" + freePort();
        RestSquareClient client = clientFor(connector, CALL_DEADLINE, closedA, closedB);

        assertThatThrownBy(() -> client.square(7, Shape.SMALL).block(Duration.ofSeconds(5)))
                .isInstanceOf(DownstreamException.class)
                .satisfies(e -> assertThat(((DownstreamException) e).kind()).isEqualTo(Kind.UNAVAILABLE))
                .hasMessageStartingWith("the REST square service at " + closedB + " is unreachable: ");
    }

    @EachConnector
    void aCallThatTimesOutIsNotRetried(RestConnector connector) throws IOException {
        Replica slow = new Replica(200);
        slow.hang = true;
        Replica healthy = new Replica(200);
        RestSquareClient client = clientFor(connector, Duration.ofMillis(500), start(slow), start(healthy));

        assertThatThrownBy(() -> client.square(7, Shape.SMALL).block(Duration.ofSeconds(5)))
                .isInstanceOf(DownstreamException.class)
                .satisfies(e -> assertThat(((DownstreamException) e).kind()).isEqualTo(Kind.TIMEOUT))
                .hasMessage("no answer from the REST square service at " + slow.baseUrl
                        + " for number 7 within 500 ms (aggregator.call-deadline)");
        assertThat(healthy.calls).hasValue(0);
    }

    private RestSquareClient clientFor(RestConnector connector, Duration callDeadline, String... baseUrls) {
        AggregatorProperties properties = new AggregatorProperties(
                100_000,
                8,
                Duration.ofSeconds(30),
                callDeadline,
                new AggregatorProperties.Rest(
                        Arrays.stream(baseUrls).map(URI::create).toList(),
                        4,
                        2,
                        connector.value(),
                        AggregatorProperties.Rest.DEFAULT_CLIENT),
                new AggregatorProperties.Grpc("unused:1"),
                new AggregatorProperties.Admission(0, 0, 0, Duration.ofSeconds(1), Duration.ofMillis(500), 0.5));
        RestClientConfiguration configuration = new RestClientConfiguration();
        replicas = configuration.squareRestReplicas(properties, loops, ClientTls.plaintext());
        return configuration.restSquareClient(replicas, properties);
    }

    private String start(Replica replica) throws IOException {
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.setExecutor(Executors.newCachedThreadPool());
        server.createContext("/rest/square/unary/", exchange -> {
            replica.calls.incrementAndGet();
            if (replica.hang) {
                try {
                    release.await(10, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            long number = Long.parseLong(exchange.getRequestURI().getPath().substring("/rest/square/unary/".length()));
            byte[] body = (replica.status == 200 ? Long.toString(number * number) : "{\"status\":503}")
                    .getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(replica.status, body.length);
            exchange.getResponseBody().write(body);
            exchange.close();
        });
        server.start();
        servers.add(server);
        replica.baseUrl = "http://127.0.0.1:" + server.getAddress().getPort();
        return replica.baseUrl;
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }

    /** One replica: the status it answers, whether it hangs, and how many calls it has seen. */
    private static final class Replica {
        final AtomicInteger calls = new AtomicInteger();
        final int status;
        volatile boolean hang;
        String baseUrl;

        Replica(int status) {
            this.status = status;
        }
    }
}
