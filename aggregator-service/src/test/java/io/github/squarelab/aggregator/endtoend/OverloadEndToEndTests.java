package io.github.squarelab.aggregator.endtoend;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The aggregator as a real process with the lab's 128 MiB heap, under far more work than it can hold: 200
 * clients asking for 20000 squares each, honouring Retry-After. Before admission control this ran the
 * stream path out of memory and left the aggregator up but deaf; now every answer is either the exact
 * squares or a 503 problem with Retry-After, health answers throughout, and the process stays up.
 */
class OverloadEndToEndTests {

    private static final int CLIENTS = 200;
    private static final int N = 20_000;
    private static final Duration LOAD = Duration.ofSeconds(8);
    /**
     * Room for the first burst of a payload dearer than the path's last: it is admitted at the rate the path last
     * measured, and on a 2-core CI runner at a third of its speed `rest/unary` with `collection` once outlived 60 s.
     */
    private static final Duration DEADLINE = Duration.ofSeconds(120);

    private static ServiceProcess rest;
    private static ServiceProcess grpc;
    private static ServiceProcess aggregator;

    private final HttpClient http = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .executor(Executors.newFixedThreadPool(4))
            .build();
    private final ObjectMapper json = new ObjectMapper();

    @BeforeAll
    static void startServices() throws Exception {
        rest = ServiceProcess.rest().start();
        grpc = ServiceProcess.grpc().start();
        aggregator = ServiceProcess.aggregator(
                        ServiceProcess.LAB_JVM_OPTIONS,
                        "--aggregator.rest.base-url=" + rest.baseUrl(),
                        "--aggregator.grpc.target=" + grpc.grpcTarget(),
                        "--aggregator.deadline=" + DEADLINE.toSeconds() + "s")
                .start();
    }

    @AfterAll
    static void stopServices() throws Exception {
        ServiceProcess.closeAll(aggregator, rest, grpc);
    }

    @ParameterizedTest
    @CsvSource({
        "grpc/stream, small",
        "grpc/pingpong, small",
        "grpc/unary, small",
        "rest/unary, small",
        "rest/h2c, small",
        "rest/unary, collection",
        "grpc/stream, collection"
    })
    void moreWorkThanFitsIsShedWithRetryAfterWhileAdmittedWorkAnswersCorrectly(String path, String payload)
            throws Exception {
        String query = payload.equals("small") ? "" : "?payload=" + payload;
        String expected = IntStream.rangeClosed(1, N)
                .mapToObj(i -> "{\"" + i + "\":" + (long) i * i + "}")
                .collect(Collectors.joining(",", "[", "]"));
        AtomicInteger correct = new AtomicInteger();
        AtomicInteger shed = new AtomicInteger();
        Map<String, Integer> unexpected = new ConcurrentHashMap<>();
        List<String> healthFailures = new CopyOnWriteArrayList<>();
        long stopAt = System.nanoTime() + LOAD.toNanos();

        ExecutorService clients = Executors.newFixedThreadPool(CLIENTS + 1);
        for (int c = 0; c < CLIENTS; c++) {
            clients.execute(() -> {
                while (System.nanoTime() < stopAt) {
                    try {
                        HttpResponse<String> response = get(path + "/" + N + query);
                        if (response.statusCode() == 200 && response.body().equals(expected)) {
                            correct.incrementAndGet();
                        } else if (isShed(response)) {
                            shed.incrementAndGet();
                            Thread.sleep(1000L
                                    * Long.parseLong(response.headers()
                                            .firstValue("Retry-After")
                                            .get()));
                        } else {
                            unexpected.merge("HTTP " + response.statusCode() + " " + response.body(), 1, Integer::sum);
                        }
                    } catch (Exception e) {
                        unexpected.merge(e.toString(), 1, Integer::sum);
                    }
                }
            });
        }
        clients.execute(() -> {
            while (System.nanoTime() < stopAt) {
                try {
                    HttpResponse<String> health = get("actuator/health");
                    if (health.statusCode() != 200) {
                        healthFailures.add("HTTP " + health.statusCode());
                    }
                    Thread.sleep(500);
                } catch (Exception e) {
                    healthFailures.add(e.toString());
                }
            }
        });
        clients.shutdown();
        assertThat(clients.awaitTermination(LOAD.plus(DEADLINE).toSeconds() + 30, TimeUnit.SECONDS))
                .isTrue();

        assertThat(unexpected).as("answers other than the squares or a shed").isEmpty();
        assertThat(healthFailures).as("health while overloaded").isEmpty();
        assertThat(correct.get()).as("admitted requests answered").isPositive();
        assertThat(shed.get()).as("requests shed").isPositive();
        assertThat(aggregator.isAlive()).isTrue();
        assertThat(aggregator.log()).doesNotContain("OutOfMemoryError");
        assertThat(get("actuator/prometheus").body())
                .containsPattern("aggregator_admission_shed_total\\{application=\"aggregator-service\",transport=\""
                        + path.replace('/', '_') + "\"} [1-9]");
    }

    private boolean isShed(HttpResponse<String> response) throws Exception {
        return response.statusCode() == 503
                && response.headers().firstValue("Retry-After").equals(Optional.of("1"))
                && response.headers().firstValue("Content-Type").equals(Optional.of("application/problem+json"))
                && json.readTree(response.body()).get("detail").asText().startsWith("the aggregator is busy: ");
    }

    private HttpResponse<String> get(String path) throws Exception {
        HttpRequest request = HttpRequest.newBuilder(URI.create(aggregator.baseUrl() + "/" + path))
                .timeout(Duration.ofSeconds(90))
                .build();
        return http.send(request, HttpResponse.BodyHandlers.ofString());
    }
}
