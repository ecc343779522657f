package io.github.squarelab.floor.grpc;

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
import io.github.squarelab.proto.Input;
import io.github.squarelab.proto.Output;
import io.github.squarelab.proto.SquareRpcGrpc;
import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The gRPC loads against the bare gRPC server on a loopback port of the system's choosing. */
class GrpcFloorTests {

    private final LongAdder answeredByServer = new LongAdder();
    private SquareServer server;

    @AfterEach
    void stopServer() {
        if (server != null) {
            server.close();
        }
    }

    @Test
    void unaryKeepsItsWindowBusyAndChecksEveryAnswerTheServerGave() throws Exception {
        server = new GrpcSquareServer("127.0.0.1", 0, countingSquares(answeredByServer));

        Measurement measurement = client(settings(Transport.GRPC_UNARY, server.port(), 8)).run();

        assertThat(measurement.calls()).isPositive();
        assertThat(measurement.answersChecked()).isEqualTo(answeredByServer.sum()).isGreaterThan(measurement.calls());
        assertThat(measurement.unansweredAtEnd()).isZero();
        assertThat(measurement.latency().p50Micros()).isPositive();
        assertThat(measurement.clientCpu()).isPositive();
    }

    @Test
    void streamChecksEveryAnswerInOrderAndDrainsTheBacklogAtTheEnd() throws Exception {
        server = new GrpcSquareServer("127.0.0.1", 0, countingSquares(answeredByServer));

        Measurement measurement = client(settings(Transport.GRPC_STREAM, server.port(), 2)).run();

        assertThat(measurement.calls()).isPositive();
        assertThat(measurement.unansweredAtEnd()).isZero();
        assertThat(measurement.answersChecked()).isEqualTo(answeredByServer.sum());
    }

    @Test
    void unaryGivesUpAndCountsTheCallsAServerLeavesUnansweredAtTheEnd() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        server = new GrpcSquareServer("127.0.0.1", 0, ShortRuns.squaresThenHang(200, release));
        try {
            Measurement measurement = ShortRuns.runWithShortDrain(
                new GrpcUnaryLoad("127.0.0.1:" + server.port(), 4, Duration.ofMinutes(1)));

            // Up to three answers read in the same batch as the one that hangs may wait unflushed behind it.
            assertThat(measurement.answersChecked()).isBetween(200L - 3, 200L);
            assertThat(measurement.unansweredAtEnd()).isEqualTo(4);
        } finally {
            release.countDown();
        }
    }

    @Test
    void streamGivesUpAndCountsTheBacklogAServerLeavesUnansweredAtTheEnd() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        server = new GrpcSquareServer("127.0.0.1", 0, ShortRuns.squaresThenHang(200, release));
        try {
            Measurement measurement = ShortRuns.runWithShortDrain(
                new GrpcStreamLoad("127.0.0.1:" + server.port(), 1, Duration.ofMinutes(1)));

            // Answers written just before the hang may wait unflushed behind it, on the blocked event loop.
            assertThat(measurement.answersChecked()).isPositive().isLessThanOrEqualTo(200);
            assertThat(measurement.unansweredAtEnd()).isPositive();
        } finally {
            release.countDown();
        }
    }

    @Test
    void unaryFailsOnAWrongSquare() {
        server = new GrpcSquareServer("127.0.0.1", 0, ShortRuns::wrongSquare);

        assertThatThrownBy(() -> client(settings(Transport.GRPC_UNARY, server.port(), 8)).run())
            .isInstanceOf(FloorFailure.class)
            .hasMessageContaining("grpc-unary answered number")
            .hasMessageContaining("when asked for");
    }

    @Test
    void streamFailsOnAWrongSquare() {
        server = new GrpcSquareServer("127.0.0.1", 0, ShortRuns::wrongSquare);

        assertThatThrownBy(() -> client(settings(Transport.GRPC_STREAM, server.port(), 2)).run())
            .isInstanceOf(FloorFailure.class)
            .hasMessageContaining("grpc-stream answered number");
    }

    @Test
    void streamFailsWhenAnAnswerIsForAnotherNumberThanTheNextOneSent() throws Exception {
        Server skipping = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
            .addService(new AnswersTheNextNumber()).build().start();
        try {
            assertThatThrownBy(() -> client(settings(Transport.GRPC_STREAM, skipping.getPort(), 1)).run())
                .isInstanceOf(FloorFailure.class)
                .hasMessageStartingWith("grpc-stream answered number 2 with 4 when the next answer due was for 1 (1)");
        } finally {
            skipping.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    @Test
    void unaryFailsWhenNoServerListens() throws Exception {
        int closedPort = closedPort();

        assertThatThrownBy(() -> client(settings(Transport.GRPC_UNARY, closedPort, 1)).run())
            .isInstanceOf(FloorFailure.class)
            .hasMessageContaining("UNAVAILABLE");
    }

    private static int closedPort() {
        SquareServer briefly = new GrpcSquareServer("127.0.0.1", 0, ShortRuns::wrongSquare);
        int port = briefly.port();
        briefly.close();
        return port;
    }

    /** Answers each stream message with the square of the number after it: right arithmetic, wrong question. */
    private static final class AnswersTheNextNumber extends SquareRpcGrpc.SquareRpcImplBase {

        @Override
        public StreamObserver<Input> findSquareBiStream(StreamObserver<Output> answers) {
            return new StreamObserver<>() {
                @Override
                public void onNext(Input input) {
                    int next = input.getNumber() + 1;
                    answers.onNext(Output.newBuilder().setNumber(next).setResult((long) next * next).build());
                }

                @Override
                public void onError(Throwable t) {
                }

                @Override
                public void onCompleted() {
                    answers.onCompleted();
                }
            };
        }
    }
}
