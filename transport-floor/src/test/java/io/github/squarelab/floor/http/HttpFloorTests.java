package io.github.squarelab.floor.http;

import static io.github.squarelab.floor.ShortRuns.client;
import static io.github.squarelab.floor.ShortRuns.countingSquares;
import static io.github.squarelab.floor.ShortRuns.settings;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.squarelab.floor.ClientSettings;
import io.github.squarelab.floor.ShortRuns;
import io.github.squarelab.floor.SquareServer;
import io.github.squarelab.floor.Transport;
import io.github.squarelab.floor.measure.FloorFailure;
import io.github.squarelab.floor.measure.Measurement;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The HTTP loads, HTTP/1.1 and h2c, against the bare HTTP server on a loopback port of the system's choosing. */
class HttpFloorTests {

    private final LongAdder answeredByServer = new LongAdder();
    private SquareServer server;

    @AfterEach
    void stopServer() {
        if (server != null) {
            server.close();
        }
    }

    @Test
    void keepsEveryConnectionBusyAndChecksEveryAnswerTheServerGave() throws Exception {
        server = new HttpSquareServer("127.0.0.1", 0, countingSquares(answeredByServer));

        Measurement measurement =
                client(settings(Transport.REST_UNARY, server.port(), 4)).run();

        assertThat(measurement.calls()).isPositive();
        assertThat(measurement.answersChecked())
                .isEqualTo(answeredByServer.sum())
                .isGreaterThan(measurement.calls());
        assertThat(measurement.unansweredAtEnd()).isZero();
        assertThat(measurement.latency().p50Micros()).isPositive();
    }

    @Test
    void givesUpAndCountsTheCallsAServerLeavesUnansweredAtTheEnd() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        server = new HttpSquareServer(
                "127.0.0.1", 0, ShortRuns.squaresThenHang(Duration.ofMillis(300), answeredByServer, release));
        try {
            Measurement measurement =
                    ShortRuns.runWithShortDrain(new HttpLoad("127.0.0.1:" + server.port(), 2, Duration.ofMinutes(1)));

            // One call at a time per connection, so every answer given was flushed before the hang.
            assertThat(measurement.answersChecked()).isPositive().isEqualTo(answeredByServer.sum());
            assertThat(measurement.unansweredAtEnd()).isEqualTo(2);
        } finally {
            release.countDown();
        }
    }

    @Test
    void failsOnAWrongSquare() {
        server = new HttpSquareServer("127.0.0.1", 0, ShortRuns::wrongSquare);

        assertThatThrownBy(() ->
                        client(settings(Transport.REST_UNARY, server.port(), 4)).run())
                .isInstanceOf(FloorFailure.class)
                .hasMessageMatching("rest_unary answered '\\d+' for \\d+ \\(\\d+\\)");
    }

    @Test
    void failsWhenNoServerListens() {
        SquareServer briefly = new HttpSquareServer("127.0.0.1", 0, ShortRuns::wrongSquare);
        int closedPort = briefly.port();
        briefly.close();

        assertThatThrownBy(() ->
                        client(settings(Transport.REST_UNARY, closedPort, 1)).run())
                .isInstanceOf(FloorFailure.class)
                .hasMessageStartingWith("rest_unary: cannot connect to 127.0.0.1:" + closedPort);
    }

    /**
     * Through a tap that reads the frames: every connection opens with the HTTP/2 preface, there are no more
     * than the connections asked for (one per stream at most), and each has its even share of the streams
     * open at once, never more.
     */
    @ParameterizedTest
    @CsvSource({
        "2, 8, 4 4",
        "3, 8, 3 3 2",
        "3, 2, 1 1",
        // More than the 100 streams on a connection that Netty's (and Tomcat's) servers allow by default.
        "1, 101, 101"
    })
    void h2cSpreadsItsStreamsOverAtMostItsConnectionsWithPriorKnowledge(
            int connections, int streams, String mostOpenOnEach) throws Exception {
        server = new HttpSquareServer("127.0.0.1", 0, countingSquares(answeredByServer));
        try (Http2Tap tap = new Http2Tap(server.port())) {
            Measurement measurement = client(new ClientSettings(
                            Transport.REST_H2C,
                            "127.0.0.1:" + tap.port(),
                            0,
                            streams,
                            0,
                            connections,
                            ShortRuns.WARMUP,
                            ShortRuns.DURATION))
                    .run();

            assertThat(tap.mostOpenStreams)
                    .as("the most streams open at once on each connection; -1 for one without the preface")
                    .map(AtomicInteger::get)
                    .containsExactlyInAnyOrderElementsOf(Arrays.stream(mostOpenOnEach.split(" "))
                            .map(Integer::valueOf)
                            .toList());
            assertThat(measurement.calls()).isPositive();
            assertThat(measurement.answersChecked())
                    .isEqualTo(answeredByServer.sum())
                    .isGreaterThan(measurement.calls());
            assertThat(measurement.unansweredAtEnd()).isZero();
            assertThat(measurement.latency().p50Micros()).isPositive();
        }
    }

    /** The server hangs with answers written but not flushed: what counts is what the client has in flight. */
    @Test
    void h2cGivesUpAndCountsTheCallsAServerLeavesUnansweredAtTheEnd() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        server = new HttpSquareServer(
                "127.0.0.1", 0, ShortRuns.squaresThenHang(Duration.ofMillis(300), answeredByServer, release));
        try {
            Measurement measurement = ShortRuns.runWithShortDrain(
                    HttpLoad.h2c("127.0.0.1:" + server.port(), 2, 6, Duration.ofMinutes(1)));

            assertThat(measurement.answersChecked()).isPositive().isLessThanOrEqualTo(answeredByServer.sum());
            assertThat(measurement.unansweredAtEnd()).isEqualTo(6);
        } finally {
            release.countDown();
        }
    }

    @Test
    void h2cFailsOnAWrongSquare() {
        server = new HttpSquareServer("127.0.0.1", 0, ShortRuns::wrongSquare);

        assertThatThrownBy(() ->
                        client(settings(Transport.REST_H2C, server.port(), 4)).run())
                .isInstanceOf(FloorFailure.class)
                .hasMessageMatching("rest_h2c answered '\\d+' for \\d+ \\(\\d+\\)");
    }

    @Test
    void h2cFailsWhenNoServerListens() {
        SquareServer briefly = new HttpSquareServer("127.0.0.1", 0, ShortRuns::wrongSquare);
        int closedPort = briefly.port();
        briefly.close();

        assertThatThrownBy(() ->
                        client(settings(Transport.REST_H2C, closedPort, 1)).run())
                .isInstanceOf(FloorFailure.class)
                .hasMessageStartingWith("rest_h2c: cannot connect to 127.0.0.1:" + closedPort);
    }
}
