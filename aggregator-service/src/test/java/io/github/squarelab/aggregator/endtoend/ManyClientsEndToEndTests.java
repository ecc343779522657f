package io.github.squarelab.aggregator.endtoend;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Many more clients than the aggregator holds at once, each asking for one square and asking again as soon as it is
 * answered, as ab does: 1,200 of them ran the lab's 128 MiB heap out before requests in progress and connections
 * were bounded. Now every answer is the exact square or a 503 problem with Retry-After, health answers throughout,
 * and the process stays up. The lab measures the full sizes (5,000 clients) and the goodput.
 */
class ManyClientsEndToEndTests {

    private static final int CLIENTS = 1_500;
    private static final Duration LOAD = Duration.ofSeconds(6);

    private static ServiceProcess rest;
    private static ServiceProcess grpc;
    private static ServiceProcess aggregator;

    private final HttpClient http = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .executor(Executors.newFixedThreadPool(4))
            .build();
    /** Health is asked through a client of its own: the load's client, busy with 1,500 answers, would delay it. */
    private final HttpClient probe =
            HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    @BeforeAll
    static void startServices() throws Exception {
        rest = ServiceProcess.rest().start();
        grpc = ServiceProcess.grpc().start();
        aggregator = ServiceProcess.aggregator(
                        ServiceProcess.LAB_JVM_OPTIONS,
                        "--aggregator.rest.base-url=" + rest.baseUrl(),
                        "--aggregator.grpc.target=" + grpc.grpcTarget())
                .start();
        warmUp();
    }

    /**
     * A few hundred requests on each path, 20 at a time, before any load is measured: a cold aggregator's first
     * seconds under 1,500 clients are the JIT compiling, which once held a health answer for 5.9 s on a busy CI
     * machine; the lab warms up the same way before it measures.
     */
    private static void warmUp() throws Exception {
        HttpClient client =
                HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        for (String path : new String[] {"rest/unary", "grpc/unary", "grpc/stream"}) {
            for (int round = 0; round < 20; round++) {
                CompletableFuture.allOf(IntStream.range(0, 20)
                                .mapToObj(i -> client.sendAsync(
                                        HttpRequest.newBuilder(URI.create(aggregator.baseUrl() + "/" + path + "/1"))
                                                .timeout(Duration.ofSeconds(30))
                                                .build(),
                                        HttpResponse.BodyHandlers.discarding()))
                                .toArray(CompletableFuture[]::new))
                        .get(60, TimeUnit.SECONDS);
            }
        }
    }

    @AfterAll
    static void stopServices() throws Exception {
        ServiceProcess.closeAll(aggregator, rest, grpc);
    }

    @ParameterizedTest
    @ValueSource(strings = {"rest/unary", "grpc/unary", "grpc/stream"})
    void thousandsOfClientsGetTheirSquareOrAShedAndTheAggregatorStaysUp(String path) throws Exception {
        AtomicInteger correct = new AtomicInteger();
        AtomicInteger shed = new AtomicInteger();
        Map<String, Integer> unexpected = new ConcurrentHashMap<>();
        List<String> healthFailures = new CopyOnWriteArrayList<>();
        AtomicLong slowestHealthMillis = new AtomicLong();
        long stopAt = System.nanoTime() + LOAD.toNanos();
        URI uri = URI.create(aggregator.baseUrl() + "/" + path + "/1");

        AtomicIntegerArray answersPerClient = new AtomicIntegerArray(CLIENTS);
        CompletableFuture<?>[] clients = new CompletableFuture<?>[CLIENTS];
        for (int c = 0; c < CLIENTS; c++) {
            int client = c;
            clients[c] = loop(uri, stopAt, () -> answersPerClient.incrementAndGet(client), correct, shed, unexpected);
        }
        Thread health = new Thread(() -> {
            while (System.nanoTime() < stopAt) {
                long start = System.nanoTime();
                try {
                    HttpResponse<String> answer = probe.send(
                            HttpRequest.newBuilder(URI.create(aggregator.baseUrl() + "/actuator/health"))
                                    .timeout(Duration.ofSeconds(30))
                                    .build(),
                            HttpResponse.BodyHandlers.ofString());
                    if (answer.statusCode() != 200 || !answer.body().contains("\"UP\"")) {
                        healthFailures.add("HTTP " + answer.statusCode() + " " + answer.body());
                    }
                    slowestHealthMillis.accumulateAndGet(
                            TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start), Math::max);
                    Thread.sleep(250);
                } catch (Exception e) {
                    healthFailures.add(e.toString());
                }
            }
        });
        health.start();
        CompletableFuture.allOf(clients).get(LOAD.toSeconds() + 60, TimeUnit.SECONDS);
        health.join();

        assertThat(unexpected).as("answers other than the square or a shed").isEmpty();
        assertThat(healthFailures).as("health under thousands of clients").isEmpty();
        // Only a stall fails here: the lab's many-clients experiment measures the 1 s target on a quiet machine,
        // while a 2-core CI runner that also runs these 1,500 clients once held a health answer for 5.9 s.
        assertThat(slowestHealthMillis.get())
                .as("the slowest health answer, ms")
                .isLessThan(15_000);
        assertThat(correct.get()).as("squares answered").isPositive();
        // Past the places a new request waits unread for one, and is shed only if it waits too long: whether any
        // is shed depends on the machine's speed, but no client may go without an answer for the whole load.
        assertThat(IntStream.range(0, CLIENTS).filter(c -> answersPerClient.get(c) == 0))
                .as("clients that got no answer in %s", LOAD)
                .isEmpty();
        assertThat(aggregator.isAlive()).isTrue();
        assertThat(aggregator.log()).doesNotContain("OutOfMemoryError");
        String metrics = settledMetrics();
        assertThat(metrics).contains("aggregator_admission_requests{application=\"aggregator-service\"} 0.0");
        assertThat(metrics).contains("aggregator_admission_squares{application=\"aggregator-service\"} 0.0");
    }

    /**
     * The metrics page once no request is admitted, or after 5 s: a request leaves the admission when Tomcat has
     * finished its answer, which can be a moment after the client has read it (seen once, with the machine busy).
     */
    private String settledMetrics() throws Exception {
        long giveUpAt = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (true) {
            String metrics = send(URI.create(aggregator.baseUrl() + "/actuator/prometheus"))
                    .get(10, TimeUnit.SECONDS)
                    .body();
            if (metrics.contains("aggregator_admission_requests{application=\"aggregator-service\"} 0.0")
                    || System.nanoTime() > giveUpAt) {
                return metrics;
            }
            Thread.sleep(100);
        }
    }

    /** One client: asks, checks the answer, and asks again at once until the load is over. */
    private CompletableFuture<Void> loop(
            URI uri,
            long stopAt,
            Runnable answered,
            AtomicInteger correct,
            AtomicInteger shed,
            Map<String, Integer> unexpected) {
        if (System.nanoTime() >= stopAt) {
            return CompletableFuture.completedFuture(null);
        }
        return send(uri)
                .handle((answer, failure) -> {
                    if (failure != null) {
                        unexpected.merge(failure.toString(), 1, Integer::sum);
                    } else if (answer.statusCode() == 200 && answer.body().equals("[{\"1\":1}]")) {
                        correct.incrementAndGet();
                        answered.run();
                    } else if (isShed(answer)) {
                        shed.incrementAndGet();
                        answered.run();
                    } else {
                        unexpected.merge("HTTP " + answer.statusCode() + " " + answer.body(), 1, Integer::sum);
                    }
                    return null;
                })
                .thenCompose(ignored -> loop(uri, stopAt, answered, correct, shed, unexpected));
    }

    private static boolean isShed(HttpResponse<String> answer) {
        return answer.statusCode() == 503
                && answer.headers().firstValue("Retry-After").orElse("").equals("1")
                && answer.headers().firstValue("Content-Type").orElse("").equals("application/problem+json")
                && answer.body().contains("\"detail\":\"the aggregator is busy: ");
    }

    private CompletableFuture<HttpResponse<String>> send(URI uri) {
        return http.sendAsync(
                HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(60)).build(),
                HttpResponse.BodyHandlers.ofString());
    }
}
