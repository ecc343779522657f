package io.github.squarelab.square.rest;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.squarelab.payload.Shape;
import java.time.Duration;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.catalina.connector.Connector;
import org.apache.coyote.AbstractProtocol;
import org.apache.coyote.UpgradeProtocol;
import org.apache.coyote.http2.Http2Protocol;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.autoconfigure.actuate.observability.AutoConfigureObservability;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.boot.web.context.WebServerApplicationContext;
import org.springframework.boot.web.embedded.tomcat.TomcatWebServer;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.ByteBufFlux;
import reactor.netty.http.HttpProtocol;
import reactor.netty.http.client.HttpClient;

/** The port speaks HTTP/2 cleartext with prior knowledge (the aggregator's rest/h2c) beside HTTP/1.1. */
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT)
@AutoConfigureObservability
class Http2PriorKnowledgeTests {

    private static final Pattern SQUARE_REQUESTS = Pattern.compile(
            "(?m)^http_server_requests_seconds_count\\{[^}]*uri=\"/rest/square/unary/\\{number}\"[^}]*} (\\S+)$");

    @LocalServerPort
    private int port;

    @Autowired
    private WebServerApplicationContext context;

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

    @Test
    void oneConnectionCarriesAsManyCallsAsTheAggregatorPutsOnIt() {
        Connector connector = ((TomcatWebServer) context.getWebServer())
                .getTomcat()
                .getService()
                .findConnectors()[0];
        Http2Protocol http2 = null;
        for (UpgradeProtocol protocol : connector.findUpgradeProtocols()) {
            if (protocol instanceof Http2Protocol found) {
                http2 = found;
            }
        }

        assertThat(http2).isNotNull();
        assertThat(http2.getMaxConcurrentStreams()).isEqualTo(160);
        assertThat(http2.getMaxConcurrentStreamExecution()).isEqualTo(160);
        // Tomcat reads a connection's frames, request bodies included, on the threads that run its streams.
        assertThat(http2.getMaxConcurrentStreamExecution())
                .as("streams one connection may run, below Tomcat's threads")
                .isLessThan(((AbstractProtocol<?>) connector.getProtocolHandler()).getMaxThreads());
        // Tomcat gives every stream with a body two buffers of the window's size: at the default 64 KiB the
        // aggregator's 4 x 200 POST streams (before its 160-call cap) took about 100 MB of the 128 MiB heap. The
        // largest payload still fits.
        int largestPayload =
                SquareEchoRoutesTests.json(Shape.COLLECTION, Integer.MIN_VALUE).length();
        assertThat(http2.getInitialWindowSize()).isBetween(largestPayload, 16 * 1024);
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
