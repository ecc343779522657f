package io.github.squarelab.floor.grpc;

import static io.github.squarelab.floor.ShortRuns.client;
import static io.github.squarelab.floor.ShortRuns.countingSquares;
import static io.github.squarelab.floor.ShortRuns.settings;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.squarelab.floor.ShortRuns;
import io.github.squarelab.floor.SquareServer;
import io.github.squarelab.floor.Squares;
import io.github.squarelab.floor.Transport;
import io.github.squarelab.floor.measure.FloorFailure;
import io.github.squarelab.floor.measure.Measurement;
import io.github.squarelab.proto.Input;
import io.github.squarelab.proto.Output;
import io.github.squarelab.proto.SquareRpcGrpc;
import io.grpc.BindableService;
import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The gRPC loads against the bare gRPC server on a loopback port of the system's choosing. */
class GrpcFloorTests {

    /** Long enough for the first answers to reach the client, short enough to fall silent inside the window. */
    private static final Duration FALLS_SILENT_AFTER = Duration.ofMillis(300);

    private final LongAdder answeredByServer = new LongAdder();
    private SquareServer server;
    private Server plainServer;

    @AfterEach
    void stopServers() throws InterruptedException {
        if (server != null) {
            server.close();
        }
        if (plainServer != null) {
            plainServer.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
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
        AnswersThenFallsSilent silent = new AnswersThenFallsSilent(FALLS_SILENT_AFTER);
        int port = startPlainServer(silent);

        Measurement measurement = ShortRuns.runWithShortDrain(new GrpcUnaryLoad("127.0.0.1:" + port, 4, Duration.ofMinutes(1)));

        assertThat(measurement.answersChecked()).isPositive().isEqualTo(silent.answered.sum());
        assertThat(measurement.unansweredAtEnd()).isEqualTo(4);
    }

    @Test
    void streamGivesUpAndCountsTheBacklogAServerLeavesUnansweredAtTheEnd() throws Exception {
        AnswersThenFallsSilent silent = new AnswersThenFallsSilent(FALLS_SILENT_AFTER);
        int port = startPlainServer(silent);

        Measurement measurement = ShortRuns.runWithShortDrain(new GrpcStreamLoad("127.0.0.1:" + port, 2, Duration.ofMinutes(1)));

        assertThat(measurement.answersChecked()).isPositive().isEqualTo(silent.answered.sum());
        assertThat(measurement.unansweredAtEnd()).isPositive();
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
        int port = startPlainServer(new AnswersTheNextNumber());

        assertThatThrownBy(() -> client(settings(Transport.GRPC_STREAM, port, 1)).run())
            .isInstanceOf(FloorFailure.class)
            .hasMessageStartingWith("grpc-stream answered number 2 with 4 when the next answer due was for 1 (1)");
    }

    @Test
    void unaryFailsWhenNoServerListens() throws Exception {
        int closedPort = closedPort();

        assertThatThrownBy(() -> client(settings(Transport.GRPC_UNARY, closedPort, 1)).run())
            .isInstanceOf(FloorFailure.class)
            .hasMessageContaining("UNAVAILABLE");
    }

    /** A test service on a plain grpc-java server, without the floor server's flow control. */
    private int startPlainServer(BindableService service) throws IOException {
        plainServer = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0)).addService(service).build().start();
        return plainServer.getPort();
    }

    private static int closedPort() {
        SquareServer briefly = new GrpcSquareServer("127.0.0.1", 0, ShortRuns::wrongSquare);
        int port = briefly.port();
        briefly.close();
        return port;
    }

    /**
     * Answers correctly for a while from the first question, then never again (nor completes a stream): a
     * server that stops answering without failing anything.
     */
    private static final class AnswersThenFallsSilent extends SquareRpcGrpc.SquareRpcImplBase {

        private final Duration answering;
        private final AtomicLong firstAskedNanos = new AtomicLong();
        final LongAdder answered = new LongAdder();

        AnswersThenFallsSilent(Duration answering) {
            this.answering = answering;
        }

        @Override
        public void findSquareUnary(Input input, StreamObserver<Output> answer) {
            if (stillAnswering()) {
                answer.onNext(square(input));
                answer.onCompleted();
            }
        }

        @Override
        public StreamObserver<Input> findSquareBiStream(StreamObserver<Output> answers) {
            return new StreamObserver<>() {
                @Override
                public void onNext(Input input) {
                    if (stillAnswering()) {
                        answers.onNext(square(input));
                    }
                }

                @Override
                public void onError(Throwable t) {
                }

                @Override
                public void onCompleted() {
                }
            };
        }

        private boolean stillAnswering() {
            long now = System.nanoTime();
            firstAskedNanos.compareAndSet(0, now);
            return now - firstAskedNanos.get() <= answering.toNanos();
        }

        private Output square(Input input) {
            answered.increment();
            return Output.newBuilder().setNumber(input.getNumber()).setResult(Squares.square(input.getNumber())).build();
        }
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
