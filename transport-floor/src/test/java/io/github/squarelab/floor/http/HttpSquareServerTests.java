package io.github.squarelab.floor.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.squarelab.floor.Squares;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http2.HttpConversionUtil;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The bare HTTP server answers as the contract says of the REST square service, over HTTP/1.1 and HTTP/2. */
class HttpSquareServerTests {

    private final HttpClient http = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5))
            .build();
    private HttpSquareServer server;

    @BeforeEach
    void startServer() {
        server = new HttpSquareServer("127.0.0.1", 0, Squares::square);
    }

    @AfterEach
    void stopServer() {
        server.close();
    }

    @ParameterizedTest
    @CsvSource({"7, 49", "-3, 9", "0, 0", "65536, 4294967296", "-2147483648, 4611686018427387904"})
    void answersTheBareSquareAsJson(String number, String square) throws Exception {
        HttpResponse<String> response = get("/rest/square/unary/" + number);

        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.headers().firstValue("Content-Type")).hasValue("application/json");
        assertThat(response.body()).isEqualTo(square);
    }

    @Test
    void answersASquareWithExactlyTheseBytes() throws Exception {
        String expected = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n49";
        try (Socket socket = new Socket("127.0.0.1", server.port())) {
            socket.setSoTimeout(5000);
            socket.getOutputStream()
                    .write("GET /rest/square/unary/7 HTTP/1.1\r\nHost: test\r\n\r\n"
                            .getBytes(StandardCharsets.US_ASCII));

            byte[] answer = socket.getInputStream().readNBytes(expected.length());

            assertThat(new String(answer, StandardCharsets.US_ASCII)).isEqualTo(expected);
        }
    }

    @Test
    void answersHttp2WithPriorKnowledgeBesideHttp11OnTheSamePort() throws Exception {
        try (H2cTestClient h2c = new H2cTestClient(server.port())) {
            H2cTestClient.Answer overHttp2 = h2c.get("/rest/square/unary/7");
            HttpResponse<String> overHttp11 = get("/rest/square/unary/8");
            H2cTestClient.Answer againOverHttp2 = h2c.get("/rest/square/unary/9");

            assertThat(overHttp2.headers().getInt(HttpConversionUtil.ExtensionHeaderNames.STREAM_ID.text()))
                    .as("the HTTP/2 stream it came on")
                    .isPositive();
            assertThat(overHttp2.status()).isEqualTo(200);
            assertThat(overHttp2.headers().get(HttpHeaderNames.CONTENT_TYPE)).isEqualTo("application/json");
            assertThat(overHttp2.body()).isEqualTo("49");
            assertThat(overHttp11.version()).isEqualTo(HttpClient.Version.HTTP_1_1);
            assertThat(overHttp11.body()).isEqualTo("64");
            assertThat(againOverHttp2.body()).isEqualTo("81");
        }
    }

    /** Status, Content-Type, Content-Length and body: what the floor's clients read. */
    @ParameterizedTest
    @CsvSource({
        "/rest/square/unary/7",
        "/rest/square/unary/-2147483648",
        "/rest/square/unary/abc",
        "/rest/square/unary/3/4",
        "/rest/square/other/3"
    })
    void answersOverHttp2WhatItAnswersOverHttp11(String path) throws Exception {
        HttpResponse<String> overHttp11 = get(path);
        H2cTestClient.Answer overHttp2;
        try (H2cTestClient h2c = new H2cTestClient(server.port())) {
            overHttp2 = h2c.get(path);
        }

        assertThat(overHttp2.status()).isEqualTo(overHttp11.statusCode());
        assertThat(Optional.ofNullable(overHttp2.headers().get(HttpHeaderNames.CONTENT_TYPE)))
                .isEqualTo(overHttp11.headers().firstValue("Content-Type"));
        assertThat(overHttp2.headers().get(HttpHeaderNames.CONTENT_LENGTH))
                .isEqualTo(overHttp11.headers().firstValue("Content-Length").orElseThrow());
        assertThat(overHttp2.body()).isEqualTo(overHttp11.body());
    }

    /** The h2c upgrade (deprecated by RFC 9113) is ignored, as a server may: the answer comes in HTTP/1.1. */
    @Test
    void answersAnUpgradeToH2cInHttp11() throws Exception {
        HttpClient upgrading =
                HttpClient.newBuilder().version(HttpClient.Version.HTTP_2).build();

        HttpResponse<String> response = upgrading.send(
                HttpRequest.newBuilder(uri("/rest/square/unary/7")).build(), HttpResponse.BodyHandlers.ofString());

        assertThat(response.version()).isEqualTo(HttpClient.Version.HTTP_1_1);
        assertThat(response.body()).isEqualTo("49");
    }

    @ParameterizedTest
    @CsvSource({"abc", "2147483648", "1.5"})
    void answers400ForANumberThatIsNotA32BitInteger(String number) throws Exception {
        HttpResponse<String> response = get("/rest/square/unary/" + number);

        assertThat(response.statusCode()).isEqualTo(400);
        assertThat(response.body()).isEmpty();
    }

    @Test
    void answers404ForAnotherPathOrMethod() throws Exception {
        assertThat(get("/rest/square/unary/3/4").statusCode()).isEqualTo(404);
        assertThat(get("/rest/square/other/3").statusCode()).isEqualTo(404);
        assertThat(http.send(
                                HttpRequest.newBuilder(uri("/rest/square/unary/3"))
                                        .POST(HttpRequest.BodyPublishers.noBody())
                                        .build(),
                                HttpResponse.BodyHandlers.ofString())
                        .statusCode())
                .isEqualTo(404);
    }

    @Test
    void answersOneRequestAfterAnotherOnOneKeptAliveConnection() throws Exception {
        try (Socket socket = new Socket("127.0.0.1", server.port())) {
            socket.setSoTimeout(5000);
            OutputStream out = socket.getOutputStream();
            BufferedReader in =
                    new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.US_ASCII));

            List<String> bodies = new ArrayList<>();
            for (int number = 1; number <= 3; number++) {
                out.write(("GET /rest/square/unary/" + number + " HTTP/1.1\r\nHost: test\r\n\r\n")
                        .getBytes(StandardCharsets.US_ASCII));
                out.flush();
                bodies.add(readBody(in));
            }

            assertThat(bodies).containsExactly("1", "4", "9");
        }
    }

    /** Reads one response with a Content-Length, returning its body. */
    private static String readBody(BufferedReader in) throws Exception {
        assertThat(in.readLine()).isEqualTo("HTTP/1.1 200 OK");
        int length = -1;
        for (String header = in.readLine(); !header.isEmpty(); header = in.readLine()) {
            assertThat(header.toLowerCase()).doesNotStartWith("connection: close");
            if (header.toLowerCase().startsWith("content-length:")) {
                length = Integer.parseInt(
                        header.substring("content-length:".length()).strip());
            }
        }
        char[] body = new char[length];
        int read = 0;
        while (read < length) {
            read += in.read(body, read, length - read);
        }
        return new String(body);
    }

    private HttpResponse<String> get(String path) throws Exception {
        return http.send(HttpRequest.newBuilder(uri(path)).build(), HttpResponse.BodyHandlers.ofString());
    }

    private URI uri(String path) {
        return URI.create("http://127.0.0.1:" + server.port() + path);
    }
}
