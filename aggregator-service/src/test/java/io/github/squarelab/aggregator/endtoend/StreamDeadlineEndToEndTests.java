package io.github.squarelab.aggregator.endtoend;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The stream paths in front of a real gRPC square service that hangs (SIGSTOP): a whole stream has the
 * request's deadline, so they answer 504 at {@code aggregator.deadline}, and answer again once the service does.
 * A short deadline needs a context of its own: AggregatorEndToEndTests' must let n = 100000 finish.
 */
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT)
class StreamDeadlineEndToEndTests {

    private static final Duration DEADLINE = Duration.ofSeconds(3);

    private static ServiceProcess grpc;

    private final HttpClient http = HttpClient.newHttpClient();
    private final ObjectMapper json = new ObjectMapper();

    @LocalServerPort
    private int port;

    @BeforeAll
    static void startSquareService() throws Exception {
        grpc = ServiceProcess.grpc().start();
    }

    @AfterAll
    static void stopSquareService() throws Exception {
        grpc.close();
    }

    @DynamicPropertySource
    static void pointAtSquareService(DynamicPropertyRegistry registry) {
        registry.add("aggregator.grpc.target", () -> grpc.grpcTarget());
        registry.add("aggregator.deadline", () -> DEADLINE.toMillis() + "ms");
    }

    @ParameterizedTest
    @ValueSource(strings = {"grpc/stream", "grpc/pingpong"})
    void aServiceThatHangsIsAGatewayTimeoutAtTheRequestsDeadlineAndAnswersAgainWhenItResumes(String path)
            throws Exception {
        assertThat(get(path + "/5").statusCode()).isEqualTo(200);
        grpc.freeze();
        try {
            long start = System.nanoTime();
            HttpResponse<String> response = get(path + "/5");

            assertThat(response.statusCode()).isEqualTo(504);
            assertThat(response.headers().firstValue("Content-Type")).hasValue("application/problem+json");
            assertThat(json.readTree(response.body()).get("detail").asText())
                    .contains("within 3000 ms (aggregator.deadline)");
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isBetween(DEADLINE, DEADLINE.plusSeconds(3));
        } finally {
            grpc.thaw();
        }

        long resumed = System.nanoTime();
        HttpResponse<String> answer;
        while ((answer = get(path + "/5")).statusCode() != 200) {
            assertThat(Duration.ofNanos(System.nanoTime() - resumed))
                    .as(path + " answers again")
                    .isLessThan(Duration.ofSeconds(5));
            Thread.sleep(50);
        }
        assertThat(answer.body()).isEqualTo("[{\"1\":1},{\"2\":4},{\"3\":9},{\"4\":16},{\"5\":25}]");
    }

    private HttpResponse<String> get(String path) throws Exception {
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/" + path))
                .timeout(Duration.ofSeconds(30))
                .build();
        return http.send(request, HttpResponse.BodyHandlers.ofString());
    }
}
