package io.github.squarelab.floor.http;

import static io.github.squarelab.floor.ShortRuns.client;
import static io.github.squarelab.floor.ShortRuns.countingSquares;
import static io.github.squarelab.floor.ShortRuns.settings;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.squarelab.floor.ShortRuns;
import io.github.squarelab.floor.SquareServer;
import io.github.squarelab.floor.Transport;
import io.github.squarelab.floor.measure.FloorFailure;
import io.github.squarelab.floor.measure.Measurement;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The HTTP load against the bare HTTP server on a loopback port of the system's choosing. */
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
}
