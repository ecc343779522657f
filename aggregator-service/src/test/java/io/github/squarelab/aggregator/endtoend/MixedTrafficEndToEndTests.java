package io.github.squarelab.aggregator.endtoend;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
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
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * grpc/unary beside grpc/stream, 6 clients each at n = 2000, against the real jars with the lab's heap, and a deadline
 * of 4 s so that a request let in that cannot finish in time shows as a 504 within the test. Before the stream had
 * connections of its own and admission judged each path's expected time, unary kept 4 % of its goodput beside the
 * stream (p50 3.3 s, docs/performance.md "Mixed traffic"): with this deadline most of its answers were 504s.
 */
class MixedTrafficEndToEndTests {

    private static final int CLIENTS = 6;
    private static final int N = 2000;
    private static final Duration WARM_UP = Duration.ofSeconds(3);
    private static final Duration PHASE = Duration.ofSeconds(6);
    private static final String EXPECTED = IntStream.rangeClosed(1, N)
            .mapToObj(i -> "{\"" + i + "\":" + (long) i * i + "}")
            .collect(Collectors.joining(",", "[", "]"));

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
                        "--aggregator.deadline=4s")
                .start();
    }

    @AfterAll
    static void stopServices() throws Exception {
        ServiceProcess.closeAll(aggregator, rest, grpc);
    }

    @Test
    void unaryBesideAStreamAnswersInTimeOrIsShedUpFrontAndKeepsAShareOfItsGoodputAlone() throws Exception {
        // Unchecked: a cold JVM, and paths not measured yet, which admission lets in unjudged.
        load(WARM_UP, "grpc/unary", "grpc/stream");
        Map<String, Map<String, Integer>> alone = load(PHASE, "grpc/unary");
        Map<String, Map<String, Integer>> mixed = load(PHASE, "grpc/unary", "grpc/stream");

        for (Map<String, Map<String, Integer>> phase : List.of(alone, mixed)) {
            phase.forEach((path, answers) -> assertThat(answers.keySet())
                    .as("%s: answers other than the squares or a shed up front", path)
                    .isSubsetOf("exact", "shed"));
        }
        int unaryAlone = alone.get("grpc/unary").getOrDefault("exact", 0);
        int unaryMixed = mixed.get("grpc/unary").getOrDefault("exact", 0);
        assertThat(unaryAlone).as("grpc/unary alone").isPositive();
        // The lab measures the share (at least a third); an eighth still fails the shared channel's 4 %, and holds on
        // a busy 2-core machine.
        assertThat(unaryMixed * 8)
                .as("grpc/unary beside grpc/stream: %d exact answers, alone %d", unaryMixed, unaryAlone)
                .isGreaterThanOrEqualTo(unaryAlone);
        assertThat(mixed.get("grpc/stream").getOrDefault("exact", 0))
                .as("grpc/stream beside grpc/unary")
                .isPositive();
        assertThat(aggregator.prometheus())
                .contains("aggregator_admission_deadline_shed_total{application=\"aggregator-service\","
                        + "transport=\"grpc_unary\"}")
                .containsPattern("aggregator_admission_deadline_rate\\{application=\"aggregator-service\","
                        + "transport=\"grpc_stream\"} [1-9]")
                .contains("aggregator_admission_deadline_squares{application=\"aggregator-service\","
                        + "transport=\"grpc_unary\"} 0.0");
    }

    /** Closed-loop clients on each path for the duration; per path, how many answers of each kind. */
    private Map<String, Map<String, Integer>> load(Duration duration, String... paths) throws InterruptedException {
        Map<String, Map<String, Integer>> answers = new ConcurrentHashMap<>();
        long stopAt = System.nanoTime() + duration.toNanos();
        ExecutorService clients = Executors.newFixedThreadPool(CLIENTS * paths.length);
        for (String path : paths) {
            Map<String, Integer> kinds = answers.computeIfAbsent(path, p -> new ConcurrentHashMap<>());
            for (int c = 0; c < CLIENTS; c++) {
                clients.execute(() -> {
                    while (System.nanoTime() < stopAt) {
                        String kind = ask(path);
                        kinds.merge(kind, 1, Integer::sum);
                        if (kind.equals("shed")) {
                            sleepQuietly(Duration.ofSeconds(1));
                        }
                    }
                });
            }
        }
        clients.shutdown();
        assertThat(clients.awaitTermination(duration.toSeconds() + 60, TimeUnit.SECONDS))
                .isTrue();
        return answers;
    }

    /** "exact", "shed" (503 with Retry-After and a problem body), or what else came back. */
    private String ask(String path) {
        try {
            HttpResponse<String> response = http.send(
                    HttpRequest.newBuilder(URI.create(aggregator.baseUrl() + "/" + path + "/" + N))
                            .timeout(Duration.ofSeconds(60))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            if (response.statusCode() == 200 && response.body().equals(EXPECTED)) {
                return "exact";
            }
            if (isShed(response)) {
                return "shed";
            }
            return "HTTP " + response.statusCode() + " "
                    + response.body().substring(0, Math.min(300, response.body().length()));
        } catch (Exception e) {
            return e.toString();
        }
    }

    private boolean isShed(HttpResponse<String> response) throws Exception {
        if (response.statusCode() != 503
                || !response.headers().firstValue("Retry-After").equals(Optional.of("1"))
                || !response.headers().firstValue("Content-Type").equals(Optional.of("application/problem+json"))) {
            return false;
        }
        JsonNode problem = json.readTree(response.body());
        return problem.get("status").asInt() == 503
                && problem.get("detail").asText().startsWith("the aggregator is busy: ");
    }

    private static void sleepQuietly(Duration duration) {
        try {
            Thread.sleep(duration.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
