package io.github.squarelab.aggregator.endtoend;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The aggregator's jar started with other HTTP clients than the default on its REST paths (Jetty for rest/unary,
 * Apache HttpClient 5 for rest/h2c), in front of the real REST square service: the same exact answers, and
 * /actuator/info says which clients answered them.
 */
class OtherRestClientsEndToEndTests {

    private static ServiceProcess rest;
    private static ServiceProcess aggregator;

    private final HttpClient http = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5))
            .build();

    @BeforeAll
    static void startServices() throws Exception {
        rest = ServiceProcess.rest().start();
        aggregator = ServiceProcess.aggregator(
                        ServiceProcess.LAB_JVM_OPTIONS,
                        "--aggregator.rest.base-url=" + rest.baseUrl(),
                        // Never called: the gRPC paths are not under test here.
                        "--aggregator.grpc.target=127.0.0.1:1",
                        "--aggregator.rest.client=jetty",
                        "--aggregator.rest.h2c-client=apache")
                .start();
    }

    @AfterAll
    static void stopServices() throws Exception {
        ServiceProcess.closeAll(aggregator, rest);
    }

    @ParameterizedTest
    @CsvSource({
        "rest/unary, 0, ''", "rest/unary, 1, ''", "rest/unary, 100, ''", "rest/unary, 100, ?payload=collection",
        "rest/h2c, 0, ''", "rest/h2c, 1, ''", "rest/h2c, 100, ''", "rest/h2c, 100, ?payload=collection"
    })
    void answersExactlyThroughTheOtherClients(String path, int n, String query) throws Exception {
        HttpResponse<String> response = get(path + "/" + n + query);

        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.body())
                .isEqualTo(IntStream.rangeClosed(1, n)
                        .mapToObj(i -> "{\"" + i + "\":" + (long) i * i + "}")
                        .collect(Collectors.joining(",", "[", "]")));
    }

    @Test
    void actuatorInfoNamesEachPathsClient() throws Exception {
        HttpResponse<String> info = get("actuator/info");

        assertThat(info.statusCode()).isEqualTo(200);
        assertThat(info.body()).contains("\"rest-client\":\"jetty\"", "\"rest-h2c-client\":\"apache\"");
        assertThat(aggregator.log()).contains("rest/unary through jetty, rest/h2c through apache");
    }

    private HttpResponse<String> get(String path) throws Exception {
        HttpRequest request = HttpRequest.newBuilder(URI.create(aggregator.baseUrl() + "/" + path))
                .timeout(Duration.ofSeconds(30))
                .build();
        return http.send(request, HttpResponse.BodyHandlers.ofString());
    }
}
