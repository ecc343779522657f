package io.github.squarelab.square.rest;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.squarelab.payload.Shape;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.autoconfigure.actuate.observability.AutoConfigureObservability;
import org.springframework.boot.test.web.server.LocalServerPort;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.ByteBufFlux;
import reactor.netty.http.HttpProtocol;
import reactor.netty.http.client.HttpClient;

/**
 * The port speaks HTTP/2 cleartext with prior knowledge (the aggregator's rest/h2c) beside HTTP/1.1, on each server (a
 * subclass per value of square.server).
 */
@AutoConfigureObservability
abstract class Http2PriorKnowledgeTests {

    private static final Pattern SQUARE_REQUESTS = Pattern.compile(
            "(?m)^http_server_requests_seconds_count\\{[^}]*uri=\"/rest/square/unary/\\{number}\"[^}]*} (\\S+)$");

    @LocalServerPort
    int port;

    @Test
    void answersOverHttp2WithPriorKnowledgeAndOverHttp11OnTheSamePort() {
        assertThat(get(HttpProtocol.H2C, "/rest/square/unary/3")).containsExactly("HTTP/2.0 200 9");
        assertThat(get(HttpProtocol.HTTP11, "/rest/square/unary/3")).containsExactly("HTTP/1.1 200 9");
    }

    @Test
    void postsAPayloadOverHttp2WithPriorKnowledgeAndOverHttp11() {
        String collection = SquareEchoRoutesTests.json(Shape.COLLECTION, 7);
        String deep = SquareEchoRoutesTests.DEEP_7;

        assertThat(post(HttpProtocol.H2C, "/rest/square/unary/7", "application/json", collection))
                .isEqualTo("HTTP/2.0 200 application/json {\"result\":49,\"payload\":" + collection + "}");
        assertThat(post(HttpProtocol.HTTP11, "/rest/square/unary/-3", "application/json", deep))
                .isEqualTo("HTTP/1.1 200 application/json {\"result\":9,\"payload\":" + deep + "}");
        assertThat(post(HttpProtocol.H2C, "/rest/square/unary/7", "application/json", "{\"small\":{}}"))
                .isEqualTo("HTTP/2.0 400 application/problem+json {\"type\":\"about:blank\",\"title\":\"Bad Request\","
                        + "\"status\":400,\"detail\":\"the body is not a payload of a known shape (wide, deep, collection):"
                        + " unknown key 'small'\",\"instance\":\"/rest/square/unary/7\"}");
        assertThat(post(HttpProtocol.H2C, "/rest/square/unary/7", "text/plain", deep))
                .startsWith("HTTP/2.0 415 application/problem+json {");
        // GET on the same connection kind is as it was.
        assertThat(get(HttpProtocol.H2C, "/rest/square/unary/7")).containsExactly("HTTP/2.0 200 49");
    }

    @Test
    void http2RequestsAreCountedInTheSquareEndpointsMetrics() throws InterruptedException {
        double before = squareRequestsCounted();

        for (int number = 1; number <= 3; number++) {
            assertThat(get(HttpProtocol.H2C, "/rest/square/unary/" + number))
                    .containsExactly("HTTP/2.0 200 " + number * number);
        }

        // The server records a request as it ends, which may be just after the client has read the answer.
        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (squareRequestsCounted() < before + 3 && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertThat(squareRequestsCounted()).isEqualTo(before + 3);
    }

    /**
     * As many streams on one connection as the aggregator's rest/h2c client opens to one replica, and a stream window
     * (SETTINGS_INITIAL_WINDOW_SIZE) the largest payload still fits in, announced in the server's first SETTINGS frame:
     * the same on every server ({@link Http2Streams}).
     */
    @Test
    void theServerAnnouncesTheStreamLimitsOfOneConnection() throws IOException {
        Map<Integer, Long> settings = Http2Settings.announcedBy(port);

        assertThat(settings).containsEntry(Http2Settings.MAX_CONCURRENT_STREAMS, 160L);
        int largestPayload =
                SquareEchoRoutesTests.json(Shape.COLLECTION, Integer.MIN_VALUE).length();
        assertThat(settings.get(Http2Settings.INITIAL_WINDOW_SIZE)).isBetween((long) largestPayload, 16L * 1024);
    }

    @Test
    void theLargestPayloadComesInOneStreamWindow() {
        String largest = SquareEchoRoutesTests.json(Shape.COLLECTION, Integer.MIN_VALUE);

        assertThat(post(HttpProtocol.H2C, "/rest/square/unary/-2147483648", "application/json", largest))
                .isEqualTo(
                        "HTTP/2.0 200 application/json {\"result\":4611686018427387904,\"payload\":" + largest + "}");
    }

    /** Every http_server_requests_seconds_count of the square endpoint, summed over its other tags. */
    private double squareRequestsCounted() {
        String page = get(HttpProtocol.HTTP11, "/actuator/prometheus").get(0);
        double sum = 0;
        for (Matcher series = SQUARE_REQUESTS.matcher(page); series.find(); ) {
            sum += Double.parseDouble(series.group(1));
        }
        return sum;
    }

    /** The answer as "VERSION STATUS CONTENT-TYPE BODY". */
    private String post(HttpProtocol protocol, String path, String contentType, String body) {
        return HttpClient.create()
                .protocol(protocol)
                .baseUrl("http://127.0.0.1:" + port)
                .headers(headers -> headers.set("Content-Type", contentType))
                .post()
                .uri(path)
                .send(ByteBufFlux.fromString(Mono.just(body)))
                .responseSingle((response, answer) -> answer.asString()
                        .map(text -> response.version().text() + " "
                                + response.status().code() + " "
                                + response.responseHeaders().get("Content-Type") + " " + text))
                .block(Duration.ofSeconds(20));
    }

    /** Each answer as "VERSION STATUS BODY". */
    private List<String> get(HttpProtocol protocol, String path) {
        return Flux.from(HttpClient.create()
                        .protocol(protocol)
                        .baseUrl("http://127.0.0.1:" + port)
                        .get()
                        .uri(path)
                        .responseSingle((response, body) -> body.asString()
                                .map(text -> response.version().text() + " "
                                        + response.status().code() + " " + text)))
                .collectList()
                .block(Duration.ofSeconds(20));
    }
}
