package io.github.squarelab.aggregator.web;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;

/**
 * Real Tomcat: with its limit at one connection, every answer closes its connection; with the default limit, none
 * does. (Tomcat's count includes the connection its acceptor waits for, so a limit of a few is reached or not by
 * timing, and cannot be tested exactly.)
 */
class CloseConnectionsAtTheLimitTests {

    @Nested
    @SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT, properties = "aggregator.admission.max-connections=1")
    class AtTheLimit {

        @LocalServerPort
        private int port;

        @Test
        void everyAnswerClosesItsConnection() throws Exception {
            try (Socket socket = connect(port)) {
                List<String> head = health(socket, reader(socket));
                assertThat(head.get(0)).isEqualTo("HTTP/1.1 200 ");
                assertThat(head).anyMatch(header -> header.equalsIgnoreCase("Connection: close"));
                assertThat(socket.getInputStream().read())
                        .as("the connection is closed")
                        .isEqualTo(-1);
            }
        }
    }

    @Nested
    @SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT)
    class BelowTheLimit {

        @LocalServerPort
        private int port;

        @Test
        void answersKeepTheirConnection() throws Exception {
            try (Socket socket = connect(port)) {
                BufferedReader answers = reader(socket);
                for (int i = 0; i < 3; i++) {
                    List<String> head = health(socket, answers);
                    assertThat(head.get(0)).isEqualTo("HTTP/1.1 200 ");
                    assertThat(head).noneMatch(header -> header.equalsIgnoreCase("Connection: close"));
                }
            }
        }
    }

    private static Socket connect(int port) throws IOException {
        Socket socket = new Socket();
        socket.connect(new InetSocketAddress("127.0.0.1", port), 5_000);
        socket.setSoTimeout(10_000);
        return socket;
    }

    private static BufferedReader reader(Socket socket) throws IOException {
        return new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.US_ASCII));
    }

    /** Asks for health on this connection; the answer's status line and headers, its chunked body read past. */
    private static List<String> health(Socket socket, BufferedReader answers) throws IOException {
        socket.getOutputStream()
                .write("GET /actuator/health HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        List<String> head = new ArrayList<>();
        for (String line = answers.readLine(); line != null && !line.isEmpty(); line = answers.readLine()) {
            head.add(line);
        }
        if (head.stream().noneMatch(header -> header.equalsIgnoreCase("Transfer-Encoding: chunked"))) {
            return head; // the body runs to the connection's end
        }
        for (int size = Integer.parseInt(answers.readLine(), 16);
                size > 0;
                size = Integer.parseInt(answers.readLine(), 16)) {
            answers.skip(size);
            answers.readLine();
        }
        answers.readLine();
        return head;
    }
}
