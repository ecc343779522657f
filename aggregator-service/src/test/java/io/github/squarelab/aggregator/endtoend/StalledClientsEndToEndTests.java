package io.github.squarelab.aggregator.endtoend;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Clients that send half a request and stop, and clients that never read their answer, hold a connection each and
 * nothing more: the other clients keep being answered, and every stalled connection is closed once
 * {@code server.tomcat.connection-timeout} has passed (2 s here, 10 s by default).
 */
class StalledClientsEndToEndTests {

    private static final int HALF_REQUESTS = 400;
    /** Fewer: each asks for 2000 squares, real work that comes before its answer stalls. */
    private static final int NEVER_READING = 50;

    private static final Duration CONNECTION_TIMEOUT = Duration.ofSeconds(2);

    private static ServiceProcess rest;
    private static ServiceProcess grpc;
    private static ServiceProcess aggregator;

    private final HttpClient http =
            HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    @BeforeAll
    static void startServices() throws Exception {
        rest = ServiceProcess.rest().start();
        grpc = ServiceProcess.grpc().start();
        aggregator = ServiceProcess.aggregator(
                        ServiceProcess.LAB_JVM_OPTIONS,
                        "--aggregator.rest.base-url=" + rest.baseUrl(),
                        "--aggregator.grpc.target=" + grpc.grpcTarget(),
                        "--server.tomcat.connection-timeout=" + CONNECTION_TIMEOUT.toMillis() + "ms",
                        "--server.tomcat.keep-alive-timeout=" + CONNECTION_TIMEOUT.toMillis() + "ms")
                .start();
    }

    @AfterAll
    static void stopServices() throws Exception {
        ServiceProcess.closeAll(aggregator, rest, grpc);
    }

    @Test
    void stalledConnectionsDoNotStarveTheOthersAndAreClosedAfterTheConnectionTimeout() throws Exception {
        long[] alone = probe(30);
        List<Socket> halfRequests = new ArrayList<>();
        List<Socket> neverReading = new ArrayList<>();
        try {
            for (int i = 0; i < HALF_REQUESTS; i++) {
                halfRequests.add(halfARequest());
            }
            for (int i = 0; i < NEVER_READING; i++) {
                neverReading.add(neverReading());
            }
            long[] beside = probe(30);

            // A busy CI machine gets room; a probe that waited for a stalled connection would wait seconds.
            assertThat(median(beside))
                    .as("median ms beside the stalled connections, against %d ms alone", median(alone))
                    .isLessThan(Math.max(3 * median(alone), median(alone) + 250));
            Thread.sleep(CONNECTION_TIMEOUT.multipliedBy(3).toMillis());
            assertThat(halfRequests.stream().filter(StalledClientsEndToEndTests::stillOpen))
                    .as("half-sent requests still open %s after they stalled", CONNECTION_TIMEOUT.multipliedBy(3))
                    .isEmpty();
            // Their answer stalls only once their fan-out is over; then the write waits out the same timeout.
            long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
            while (neverReading.stream().anyMatch(StalledClientsEndToEndTests::stillOpen)
                    && System.nanoTime() < deadline) {
                Thread.sleep(500);
            }
            assertThat(neverReading.stream().filter(StalledClientsEndToEndTests::stillOpen))
                    .as("connections that never read still open")
                    .isEmpty();
        } finally {
            for (Socket socket : halfRequests) {
                socket.close();
            }
            for (Socket socket : neverReading) {
                socket.close();
            }
        }
        assertThat(aggregator.isAlive()).isTrue();
    }

    /** Sequential requests for 10 squares, each checked; their times in ms. */
    private long[] probe(int count) throws Exception {
        long[] millis = new long[count];
        HttpRequest request = HttpRequest.newBuilder(URI.create(aggregator.baseUrl() + "/rest/unary/10"))
                .timeout(Duration.ofSeconds(30))
                .build();
        for (int i = 0; i < count; i++) {
            long start = System.nanoTime();
            HttpResponse<String> answer = http.send(request, HttpResponse.BodyHandlers.ofString());
            millis[i] = (System.nanoTime() - start) / 1_000_000;
            assertThat(answer.statusCode()).isEqualTo(200);
            assertThat(answer.body()).startsWith("[{\"1\":1},{\"2\":4},").endsWith("{\"10\":100}]");
        }
        return millis;
    }

    private Socket halfARequest() throws IOException {
        Socket socket = connect(64 * 1024);
        socket.getOutputStream().write("GET /rest/unary/1 HTTP/1.1\r\nHost: x\r\n".getBytes(StandardCharsets.US_ASCII));
        return socket;
    }

    /** Asks for an answer far larger than its 4 KiB receive buffer, and never reads it. */
    private Socket neverReading() throws IOException {
        Socket socket = connect(4 * 1024);
        socket.getOutputStream()
                .write("GET /grpc/unary/2000 HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        return socket;
    }

    private Socket connect(int receiveBuffer) throws IOException {
        Socket socket = new Socket();
        socket.setReceiveBufferSize(receiveBuffer);
        URI base = URI.create(aggregator.baseUrl());
        socket.connect(new InetSocketAddress(base.getHost(), base.getPort()), 5_000);
        return socket;
    }

    /** Reads what the server sent, if anything; false once it reaches the end the server's close put there. */
    private static boolean stillOpen(Socket socket) {
        try {
            return !closedByTheServer(socket);
        } catch (IOException e) {
            return false;
        }
    }

    private static boolean closedByTheServer(Socket socket) throws IOException {
        socket.setSoTimeout(50);
        byte[] buffer = new byte[64 * 1024];
        InputStream in = socket.getInputStream();
        try {
            while (true) {
                if (in.read(buffer) < 0) {
                    return true;
                }
            }
        } catch (SocketTimeoutException stillOpen) {
            return false;
        } catch (IOException reset) {
            return true;
        }
    }

    private static long median(long[] millis) {
        long[] sorted = millis.clone();
        Arrays.sort(sorted);
        return sorted[sorted.length / 2];
    }
}
