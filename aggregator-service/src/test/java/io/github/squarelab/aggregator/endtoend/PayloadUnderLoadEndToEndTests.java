package io.github.squarelab.aggregator.endtoend;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Many calls with a collection payload at once, against the real square services, at the aggregator's 128 MiB heap.
 * Every request must end in the exact squares (asked again when shed up front), and every service stay up without
 * running out of memory.
 *
 * <p>rest/h2c (a POST of about 5.3 KB and an answer of about 5.4 KB a call) stalled before: at 5 requests Tomcat's
 * answers waited for HTTP/2 window credit it had lost (apache/tomcat#1032) until its 5 s write timeout reset them;
 * at 50, the calls' streams took every Tomcat thread, each waiting for a request body no thread was left to read.
 *
 * <p>grpc/stream (100 pipelined streams of 1000 collection messages, about 2.7 KB each) failed before: the gRPC
 * square service let each stream's client send a 1 MiB flow-control window ahead of what it read, the waiting
 * messages filled its 128 MiB of direct memory, and the transport failed with every stream on it (about 200 of the
 * first 300 requests answered 502 or 503).
 */
class PayloadUnderLoadEndToEndTests {

    /**
     * Room for the first burst on a path: it is admitted while the path warms up, and on a 2-core CI runner slower
     * than ours 100 grpc/stream requests of 1000 collection messages all outlived the default 30 s (answered 504).
     * What this test guards, a stall or a transport that fails, still shows as an answer other than the squares.
     */
    private static final Duration DEADLINE = Duration.ofSeconds(120);

    private static ServiceProcess rest;
    private static ServiceProcess grpc;
    private static ServiceProcess aggregator;

    private final HttpClient http = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .executor(Executors.newFixedThreadPool(4))
            .build();

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
    @CsvSource({"rest/h2c, 5, 50, 20", "rest/h2c, 50, 200, 50", "grpc/stream, 100, 1000, 300"})
    void everyCallWithACollectionIsAnsweredExactly(String path, int clients, int n, int requests) throws Exception {
        String expected = IntStream.rangeClosed(1, n)
                .mapToObj(i -> "{\"" + i + "\":" + (long) i * i + "}")
                .collect(Collectors.joining(",", "[", "]"));
        Map<String, Integer> unexpected = new ConcurrentHashMap<>();

        ExecutorService pool = Executors.newFixedThreadPool(clients);
        List<Future<?>> answers = new ArrayList<>();
        for (int r = 0; r < requests; r++) {
            answers.add(pool.submit(() -> {
                try {
                    HttpResponse<String> response = getRetryingSheds(path + "/" + n + "?payload=collection");
                    if (response.statusCode() != 200 || !response.body().equals(expected)) {
                        String body = response.body();
                        unexpected.merge(
                                "HTTP " + response.statusCode() + " "
                                        + (body.length() > 300 ? body.substring(0, 300) + "..." : body),
                                1,
                                Integer::sum);
                    }
                } catch (Exception e) {
                    unexpected.merge(e.toString(), 1, Integer::sum);
                }
            }));
        }
        pool.shutdown();
        assertThat(pool.awaitTermination(10, TimeUnit.MINUTES)).isTrue();
        for (Future<?> answer : answers) {
            answer.get();
        }

        assertThat(unexpected).as("answers other than the exact squares").isEmpty();
        assertThat(get("actuator/health").statusCode()).isEqualTo(200);
        for (ServiceProcess service : new ServiceProcess[] {aggregator, rest, grpc}) {
            assertThat(service.isAlive()).isTrue();
            assertThat(service.log()).doesNotContain("OutOfMemoryError");
        }
    }

    /**
     * As a client that honours Retry-After: a request shed up front (its path could not answer it in time on a busy
     * machine) is asked again, so that every request still ends in the exact squares.
     */
    private HttpResponse<String> getRetryingSheds(String path) throws Exception {
        HttpResponse<String> response = get(path);
        while (response.statusCode() == 503
                && response.body().contains("the aggregator is busy: ")
                && response.headers().firstValue("Retry-After").isPresent()) {
            Thread.sleep(1000L
                    * Long.parseLong(
                            response.headers().firstValue("Retry-After").get()));
            response = get(path);
        }
        return response;
    }

    private HttpResponse<String> get(String path) throws Exception {
        HttpRequest request = HttpRequest.newBuilder(URI.create(aggregator.baseUrl() + "/" + path))
                .timeout(DEADLINE.plusSeconds(30))
                .build();
        return http.send(request, HttpResponse.BodyHandlers.ofString());
    }
}
