package io.github.squarelab.square.rest;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedInputStream;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpRequest.BodyPublisher;
import java.net.http.HttpRequest.BodyPublishers;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandlers;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.autoconfigure.actuate.observability.AutoConfigureObservability;
import org.springframework.boot.test.web.client.TestRestTemplate;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.boot.web.context.WebServerApplicationContext;
import org.springframework.boot.web.server.WebServer;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;

/**
 * The packaged configuration on a real port, on each server (a subclass per value of square.server): the API as
 * outside clients see it, health, and only the promised actuator endpoints.
 */
@AutoConfigureObservability
abstract class SquareRestIntegrationTests {

    private static final HttpClient HTTP11 = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5))
            .build();

    @Autowired
    private TestRestTemplate http;

    @Autowired
    private WebServerApplicationContext context;

    @LocalServerPort
    private int port;

    /** The web server square.server asks for. */
    abstract Class<? extends WebServer> webServer();

    @Test
    void runsOnTheServerItWasAskedFor() {
        assertThat(context.getWebServer()).isInstanceOf(webServer());
    }

    @Test
    void infoNamesTheServerItRunsOn() {
        String server = context.getEnvironment().getProperty("square.server", "netty");

        assertThat(http.getForObject("/actuator/info", String.class))
                .startsWith("{\"square\":{\"server\":\"" + server + "\",\"web-server\":\""
                        + webServer().getSimpleName() + "\",\"virtual-threads\":false,\"java\":\""
                        + Runtime.version() + "\"}");
    }

    @Test
    void answersOverARealPort() {
        ResponseEntity<String> response = http.getForEntity("/rest/square/unary/65536", String.class);

        assertThat(response.getStatusCode()).isEqualTo(HttpStatus.OK);
        assertThat(response.getHeaders().getContentType()).isEqualTo(MediaType.APPLICATION_JSON);
        assertThat(response.getBody()).isEqualTo("4294967296");
    }

    @Test
    void healthIsUpWithoutDetails() {
        assertThat(http.getForObject("/actuator/health", String.class)).isEqualTo("{\"status\":\"UP\"}");
    }

    @Test
    void servedRequestsShowUpAsPrometheusHistograms() {
        assertThat(http.getForObject("/rest/square/unary/12", String.class)).isEqualTo("144");

        ResponseEntity<String> metrics = http.getForEntity("/actuator/prometheus", String.class);

        assertThat(metrics.getStatusCode()).isEqualTo(HttpStatus.OK);
        assertThat(metrics.getBody())
                .contains("http_server_requests_seconds_bucket{application=\"square-rest-service\"")
                .containsPattern(
                        "http_server_requests_seconds_count\\{[^}]*uri=\"/rest/square/unary/\\{number}\"[^}]*} [1-9]");
    }

    @Test
    void onlyHealthInfoAndPrometheusAreExposed() {
        assertThat(http.getForEntity("/actuator/info", String.class).getStatusCode())
                .isEqualTo(HttpStatus.OK);
        for (String hidden : new String[] {"env", "beans", "metrics", "heapdump", "shutdown"}) {
            assertThat(http.getForEntity("/actuator/" + hidden, String.class).getStatusCode())
                    .as(hidden)
                    .isEqualTo(HttpStatus.NOT_FOUND);
        }
    }

    /** Every answer of the contract, over HTTP/1.1, as "STATUS CONTENT-TYPE BODY". */
    @Test
    void answersEveryKindOfRequestAsTheContractSays() throws Exception {
        String deep = SquareEchoRoutesTests.DEEP_7;

        assertThat(send("GET", "/rest/square/unary/-3", null, null).text()).isEqualTo("200 application/json 9");
        assertThat(send("POST", "/rest/square/unary/7", "application/json", deep)
                        .text())
                .isEqualTo("200 application/json {\"result\":49,\"payload\":" + deep + "}");
        assertThat(send("GET", "/rest/square/unary/2147483648", null, null).text())
                .isEqualTo("400 application/problem+json {\"type\":\"about:blank\",\"title\":\"Bad Request\","
                        + "\"status\":400,\"detail\":\"number must be a 32-bit signed integer (from -2147483648 to"
                        + " 2147483647), got '2147483648'\",\"instance\":\"/rest/square/unary/2147483648\"}");
        assertThat(send("POST", "/rest/square/unary/7", "application/json", "{}")
                        .text())
                .isEqualTo(notAPayload("no shape: the object must have one key, the shape's name"));

        Answer notJson = send("POST", "/rest/square/unary/7", "text/plain", deep);
        assertThat(notJson.text())
                .isEqualTo(
                        "415 application/problem+json {\"type\":\"about:blank\",\"title\":\"Unsupported Media Type\","
                                + "\"status\":415,\"detail\":\"Content-Type 'text/plain' is not supported: a payload is"
                                + " application/json\",\"instance\":\"/rest/square/unary/7\"}");
        assertThat(notJson.header("Accept")).isEqualTo("application/json");
        assertThat(send("POST", "/rest/square/unary/7", null, deep).text())
                .isEqualTo(
                        "415 application/problem+json {\"type\":\"about:blank\",\"title\":\"Unsupported Media Type\","
                                + "\"status\":415,\"detail\":\"Content-Type is missing: a payload is application/json\","
                                + "\"instance\":\"/rest/square/unary/7\"}");

        Answer put = send("PUT", "/rest/square/unary/7", "application/json", deep);
        assertThat(put.text())
                .isEqualTo("405 application/problem+json {\"type\":\"about:blank\",\"title\":\"Method Not Allowed\","
                        + "\"status\":405,\"detail\":\"Method 'PUT' is not supported.\","
                        + "\"instance\":\"/rest/square/unary/7\"}");
        assertThat(put.header("Allow")).isEqualTo("GET,HEAD,POST,OPTIONS");

        assertThat(send("GET", "/rest/square/binary/7", null, null).text())
                .isEqualTo("404 application/problem+json {\"type\":\"about:blank\",\"title\":\"Not Found\","
                        + "\"status\":404,\"detail\":\"No endpoint GET /rest/square/binary/7.\","
                        + "\"instance\":\"/rest/square/binary/7\"}");

        assertThat(send("HEAD", "/rest/square/unary/7", null, null).text()).isEqualTo("200 application/json ");
        Answer options = send("OPTIONS", "/rest/square/unary/7", null, null);
        assertThat(options.status()).isEqualTo(200);
        assertThat(options.header("Allow")).isEqualTo("GET,HEAD,POST,OPTIONS");
    }

    /** Refused whether the length is declared or only found while reading (chunked). */
    @Test
    void aBodyOverSixtyFourKibibytesIsRefused() throws Exception {
        String tooLarge = notAPayload("larger than any payload: more than 65536 bytes");
        byte[] body = ("{\"collection\":[" + "{\"id\":0,\"name\":\"x\",\"count\":0,\"value\":0},".repeat(2000)
                        + "{\"id\":0,\"name\":\"x\",\"count\":0,\"value\":0}]}")
                .getBytes(StandardCharsets.UTF_8);

        assertThat(sendBody("POST", "/rest/square/unary/7", "application/json", BodyPublishers.ofByteArray(body))
                        .text())
                .isEqualTo(tooLarge);
        assertThat(sendBody(
                                "POST",
                                "/rest/square/unary/7",
                                "application/json",
                                BodyPublishers.ofInputStream(() -> new ByteArrayInputStream(body)))
                        .text())
                .isEqualTo(tooLarge);
    }

    /**
     * 600 requests one after another on one kept-alive connection, each answered within 2 s: the aggregator keeps its
     * connections. Every third is health, which WebFlux answers off the event loop, so that the next request comes
     * while that answer is still being finished: Reactor Netty 1.2 (Boot 3.5's) then answered that request and read no
     * more of the connection (reactor-netty issue 4361). Tomcat would close the connection after 100 requests but for
     * server.tomcat.max-keep-alive-requests.
     */
    @Test
    void oneKeptAliveConnectionAnswersRequestAfterRequest() throws IOException {
        try (Socket socket = new Socket("127.0.0.1", port)) {
            socket.setSoTimeout(2000);
            socket.setTcpNoDelay(true);
            OutputStream out = socket.getOutputStream();
            InputStream in = new BufferedInputStream(socket.getInputStream());
            for (int number = 1; number <= 400; number += 2) {
                assertThat(get(out, in, "/actuator/health", number)).isEqualTo("200 {\"status\":\"UP\"}");
                assertThat(get(out, in, "/rest/square/unary/" + number, number)).isEqualTo("200 " + number * number);
                assertThat(get(out, in, "/rest/square/unary/" + (number + 1), number + 1))
                        .isEqualTo("200 " + (number + 1) * (number + 1));
            }
        }
    }

    /** "STATUS BODY" of a GET on the connection, awaited 2 s at most. */
    private static String get(OutputStream out, InputStream in, String path, int number) throws IOException {
        out.write(("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        out.flush();
        try {
            return RawHttp11.readAnswer(in);
        } catch (SocketTimeoutException e) {
            throw new AssertionError("no answer in 2 s to GET " + path + " (" + number + " of 400 squares)", e);
        }
    }

    private static String notAPayload(String what) {
        return "400 application/problem+json {\"type\":\"about:blank\",\"title\":\"Bad Request\",\"status\":400,"
                + "\"detail\":\"the body is not a payload of a known shape (wide, deep, collection): " + what
                + "\",\"instance\":\"/rest/square/unary/7\"}";
    }

    private Answer send(String method, String path, String contentType, String body) throws Exception {
        return sendBody(
                method,
                path,
                contentType,
                body == null ? BodyPublishers.noBody() : BodyPublishers.ofString(body, StandardCharsets.UTF_8));
    }

    private Answer sendBody(String method, String path, String contentType, BodyPublisher body) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(20))
                .method(method, body);
        if (contentType != null) {
            request.header("Content-Type", contentType);
        }
        try {
            return new Answer(HTTP11.send(request.build(), BodyHandlers.ofString(StandardCharsets.UTF_8)));
        } catch (IOException closed) {
            // A server may close a kept-alive connection after an error answer to a request whose body it did not
            // read, while the client has already picked that connection for the next request (seen once on Jetty in
            // CI): that request was never read, so it is sent again once, on a new connection.
            if (!String.valueOf(closed.getMessage()).contains("received no bytes")) {
                throw closed;
            }
            return new Answer(HTTP11.send(request.build(), BodyHandlers.ofString(StandardCharsets.UTF_8)));
        }
    }

    private record Answer(HttpResponse<String> response) {

        int status() {
            return response.statusCode();
        }

        String header(String name) {
            return response.headers().firstValue(name).orElse(null);
        }

        String text() {
            return status() + " " + header("Content-Type") + " " + response.body();
        }
    }
}
