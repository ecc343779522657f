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
import io.github.squarelab.stream.SquaringStream;
import io.grpc.BindableService;
import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The gRPC loads against the bare gRPC server on a loopback port of the system's choosing. */
class GrpcFloorTests {

    /** Long enough for the first answers to reach the client, short enough to fall silent inside the measured interval. */
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

        Measurement measurement =
                client(settings(Transport.GRPC_UNARY, server.port(), 8)).run();

        assertThat(measurement.calls()).isPositive();
        assertThat(measurement.answersChecked())
                .isEqualTo(answeredByServer.sum())
                .isGreaterThan(measurement.calls());
        assertThat(measurement.unansweredAtEnd()).isZero();
        assertThat(measurement.latency().p50Micros()).isPositive();
        assertThat(measurement.clientCpu()).isPositive();
    }

    @Test
    void streamChecksEveryAnswerTheFloorServerGave() throws Exception {
        server = new GrpcSquareServer("127.0.0.1", 0, countingSquares(answeredByServer));

        Measurement measurement =
                client(settings(Transport.GRPC_STREAM, server.port(), 2)).run();

        assertThat(measurement.calls()).isPositive();
        assertThat(measurement.unansweredAtEnd()).isZero();
        assertThat(measurement.answersChecked())
                .isEqualTo(answeredByServer.sum())
                .isGreaterThan(measurement.calls());
    }

    /** 1 half-closes with the first message; 1500 goes round the numbers 1..1000 once and on to 500. */
    @ParameterizedTest
    @ValueSource(ints = {1, 100, 1500})
    void streamRunsWholeStreamsOneAfterAnotherEachWithExactlyItsMessages(int messagesPerStream) throws Exception {
        CountsEachStream counting = new CountsEachStream();
        int port = startPlainServer(counting);

        Measurement measurement = client(settings(Transport.GRPC_STREAM, port, 2, messagesPerStream))
                .run();

        assertThat(counting.outOfOrder.get()).as("first message out of order").isNull();
        assertThat(counting.opened.sum()).as("streams opened").isGreaterThan(2 * 3);
        assertThat(counting.messagesPerHalfClosedStream)
                .as("messages on each stream, as the server saw it")
                .hasSize((int) counting.opened.sum())
                .containsOnly(messagesPerStream);
        assertThat(measurement.answersChecked())
                .isEqualTo(counting.opened.sum() * messagesPerStream)
                .isGreaterThan(measurement.calls());
        assertThat(measurement.calls()).isPositive();
        assertThat(measurement.unansweredAtEnd()).isZero();
    }

    @Test
    void pingPongChecksEveryAnswerTheFloorServerGave() throws Exception {
        server = new GrpcSquareServer("127.0.0.1", 0, countingSquares(answeredByServer));

        Measurement measurement =
                client(settings(Transport.GRPC_PINGPONG, server.port(), 2)).run();

        assertThat(measurement.calls()).isPositive();
        assertThat(measurement.unansweredAtEnd()).isZero();
        assertThat(measurement.answersChecked())
                .isEqualTo(answeredByServer.sum())
                .isGreaterThan(measurement.calls());
    }

    /** A server that answers late sees each ping-pong stream send its next number only once answered. */
    @Test
    void pingPongKeepsOneMessageInFlightOnEachStreamAndRunsWholeStreams() throws Exception {
        AnswersLate late = new AnswersLate();
        int port = startPlainServer(late);

        Measurement measurement =
                client(settings(Transport.GRPC_PINGPONG, port, 2, 5)).run();

        assertThat(late.mostUnanswered.get())
                .as("most messages a stream had unanswered")
                .isEqualTo(1);
        assertThat(late.outOfOrder.get()).as("a message out of order").isNull();
        assertThat(late.opened.sum()).as("streams opened").isGreaterThan(2 * 3);
        assertThat(late.messagesPerHalfClosedStream)
                .as("messages on each stream, as the server saw it")
                .hasSize((int) late.opened.sum())
                .containsOnly(5);
        assertThat(measurement.answersChecked())
                .isEqualTo(late.opened.sum() * 5)
                .isEqualTo(late.answered.sum())
                .isGreaterThan(measurement.calls());
        assertThat(measurement.calls()).isPositive();
        assertThat(measurement.unansweredAtEnd()).isZero();
    }

    /** The check above can fail: grpc_stream sends without waiting, and the same server sees it. */
    @Test
    void aStreamThatSendsAheadShowsMoreThanOneMessageInFlight() throws Exception {
        AnswersLate late = new AnswersLate();
        int port = startPlainServer(late);

        client(settings(Transport.GRPC_STREAM, port, 2, 5)).run();

        assertThat(late.mostUnanswered.get()).isGreaterThan(1);
    }

    @Test
    void pingPongFailsOnAWrongSquare() {
        server = new GrpcSquareServer("127.0.0.1", 0, ShortRuns::wrongSquare);

        assertThatThrownBy(() -> client(settings(Transport.GRPC_PINGPONG, server.port(), 2))
                        .run())
                .isInstanceOf(FloorFailure.class)
                .hasMessageStartingWith(
                        "grpc_pingpong answered number 1 with 2 when the next answer due was for 1 (1)");
    }

    @Test
    void unaryGivesUpAndCountsTheCallsAServerLeavesUnansweredAtTheEnd() throws Exception {
        AnswersThenFallsSilent silent = new AnswersThenFallsSilent(FALLS_SILENT_AFTER);
        int port = startPlainServer(silent);

        Measurement measurement =
                ShortRuns.runWithShortDrain(new GrpcUnaryLoad("127.0.0.1:" + port, 4, Duration.ofMinutes(1)));

        assertThat(measurement.answersChecked()).isPositive().isEqualTo(silent.answered.sum());
        assertThat(measurement.unansweredAtEnd()).isEqualTo(4);
    }

    /**
     * The server reads every message (no manual flow control here), and by the time the load gives up it
     * has long received what the streams under way sent, so what was sent and never answered is exactly
     * what it received and did not answer.
     */
    @Test
    void streamGivesUpAndCountsWhatAServerThatStopsAnsweringMidStreamLeftUnanswered() throws Exception {
        AnswersThenFallsSilent silent = new AnswersThenFallsSilent(FALLS_SILENT_AFTER);
        int port = startPlainServer(silent);

        Measurement measurement = ShortRuns.runWithShortDrain(
                new GrpcStreamLoad("127.0.0.1:" + port, 2, ShortRuns.MESSAGES_PER_STREAM, Duration.ofMinutes(1)));

        assertThat(measurement.answersChecked()).isPositive().isEqualTo(silent.answered.sum());
        assertThat(measurement.unansweredAtEnd()).isPositive().isEqualTo(silent.received.sum() - silent.answered.sum());
    }

    @Test
    void streamFailsWhenTheServerCompletesBeforeAnsweringEveryMessage() throws Exception {
        int port = startPlainServer(new CompletesAfter(ShortRuns.MESSAGES_PER_STREAM - 1));

        assertThatThrownBy(
                        () -> client(settings(Transport.GRPC_STREAM, port, 2)).run())
                .isInstanceOf(FloorFailure.class)
                .hasMessageStartingWith("grpc_stream completed after 99 of 100 answers");
    }

    @Test
    void streamFailsOnAnAnswerToAMessageItNeverSent() throws Exception {
        int port = startPlainServer(new AnswersOneMoreAtTheEnd());

        assertThatThrownBy(
                        () -> client(settings(Transport.GRPC_STREAM, port, 2)).run())
                .isInstanceOf(FloorFailure.class)
                .hasMessageStartingWith(
                        "grpc_stream answered number 101 with 10201 when the next answer due was for nothing unanswered");
    }

    @Test
    void unaryFailsOnAWrongSquare() {
        server = new GrpcSquareServer("127.0.0.1", 0, ShortRuns::wrongSquare);

        assertThatThrownBy(() ->
                        client(settings(Transport.GRPC_UNARY, server.port(), 8)).run())
                .isInstanceOf(FloorFailure.class)
                .hasMessageContaining("grpc_unary answered number")
                .hasMessageContaining("when asked for");
    }

    @Test
    void streamFailsOnAWrongSquare() {
        server = new GrpcSquareServer("127.0.0.1", 0, ShortRuns::wrongSquare);

        assertThatThrownBy(() -> client(settings(Transport.GRPC_STREAM, server.port(), 2))
                        .run())
                .isInstanceOf(FloorFailure.class)
                .hasMessageContaining("grpc_stream answered number");
    }

    @Test
    void streamFailsWhenAnAnswerIsForAnotherNumberThanTheNextOneSent() throws Exception {
        int port = startPlainServer(new AnswersTheNextNumber());

        assertThatThrownBy(
                        () -> client(settings(Transport.GRPC_STREAM, port, 1)).run())
                .isInstanceOf(FloorFailure.class)
                .hasMessageStartingWith("grpc_stream answered number 2 with 4 when the next answer due was for 1 (1)");
    }

    @Test
    void unaryFailsWhenNoServerListens() throws Exception {
        int closedPort = closedPort();

        assertThatThrownBy(() ->
                        client(settings(Transport.GRPC_UNARY, closedPort, 1)).run())
                .isInstanceOf(FloorFailure.class)
                .hasMessageContaining("UNAVAILABLE");
    }

    /** A test service on a plain grpc-java server, without the floor server's flow control. */
    private int startPlainServer(BindableService service) throws IOException {
        plainServer = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
                .addService(service)
                .build()
                .start();
        return plainServer.getPort();
    }

    private static int closedPort() {
        SquareServer briefly = new GrpcSquareServer("127.0.0.1", 0, ShortRuns::wrongSquare);
        int port = briefly.port();
        briefly.close();
        return port;
    }

    /**
     * Answers correctly for a while from the first question, completing the streams that half-close
     * meanwhile, then never again (nor completes a stream): a server that stops answering without failing
     * anything.
     */
    private static final class AnswersThenFallsSilent extends SquareRpcGrpc.SquareRpcImplBase {

        private final Duration answering;
        private final AtomicLong firstAskedNanos = new AtomicLong();
        final LongAdder answered = new LongAdder();
        final LongAdder received = new LongAdder();

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
                    received.increment();
                    if (stillAnswering()) {
                        answers.onNext(square(input));
                    }
                }

                @Override
                public void onError(Throwable t) {}

                @Override
                public void onCompleted() {
                    if (stillAnswering()) {
                        answers.onCompleted();
                    }
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
            return Output.newBuilder()
                    .setNumber(input.getNumber())
                    .setResult(Squares.square(input.getNumber()))
                    .build();
        }
    }

    /**
     * The floor's own stream service (SquaringStream, with its flow control), counting what each stream
     * brought: how many messages by the time it half-closed, and whether they were 1, 2, ... in the
     * floor's cycle.
     */
    private static final class CountsEachStream extends SquareRpcGrpc.SquareRpcImplBase {

        final LongAdder opened = new LongAdder();
        final Queue<Integer> messagesPerHalfClosedStream = new ConcurrentLinkedQueue<>();
        final AtomicReference<String> outOfOrder = new AtomicReference<>();

        @Override
        public StreamObserver<Input> findSquareBiStream(StreamObserver<Output> answers) {
            opened.increment();
            SquaringStream squaring =
                    new SquaringStream((ServerCallStreamObserver<Output>) answers, input -> Output.newBuilder()
                            .setNumber(input.getNumber())
                            .setResult(Squares.square(input.getNumber()))
                            .build());
            return new StreamObserver<>() {
                private int messages;
                private int expected = 1;

                @Override
                public void onNext(Input input) {
                    if (input.getNumber() != expected) {
                        outOfOrder.compareAndSet(
                                null, "message " + (messages + 1) + " was " + input.getNumber() + ", not " + expected);
                    }
                    messages++;
                    expected = Squares.next(expected);
                    squaring.onNext(input);
                }

                @Override
                public void onError(Throwable t) {
                    squaring.onError(t);
                }

                @Override
                public void onCompleted() {
                    messagesPerHalfClosedStream.add(messages);
                    squaring.onCompleted();
                }
            };
        }
    }

    /**
     * Answers each stream message a millisecond late, on a timer of its own, noting the most messages any
     * stream had unanswered at once; it counts a message answered before sending its answer, so a client that
     * waits for each answer is never seen with two. Completes a stream after its last answer.
     */
    private static final class AnswersLate extends SquareRpcGrpc.SquareRpcImplBase {

        private static final long LATE_MILLIS = 1;

        private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(runnable -> {
            Thread thread = new Thread(runnable, "answers-late");
            thread.setDaemon(true);
            return thread;
        });
        final AtomicInteger mostUnanswered = new AtomicInteger();
        final LongAdder opened = new LongAdder();
        final LongAdder answered = new LongAdder();
        final Queue<Integer> messagesPerHalfClosedStream = new ConcurrentLinkedQueue<>();
        final AtomicReference<String> outOfOrder = new AtomicReference<>();

        @Override
        public StreamObserver<Input> findSquareBiStream(StreamObserver<Output> answers) {
            opened.increment();
            AtomicInteger unanswered = new AtomicInteger();
            return new StreamObserver<>() {
                private int messages;
                private int expected = 1;

                @Override
                public void onNext(Input input) {
                    if (input.getNumber() != expected) {
                        outOfOrder.compareAndSet(null, "message " + (messages + 1) + " was " + input.getNumber());
                    }
                    messages++;
                    expected = Squares.next(expected);
                    mostUnanswered.accumulateAndGet(unanswered.incrementAndGet(), Math::max);
                    later(() -> {
                        unanswered.decrementAndGet();
                        answered.increment();
                        answers.onNext(squareOf(input.getNumber()));
                    });
                }

                @Override
                public void onError(Throwable t) {}

                @Override
                public void onCompleted() {
                    messagesPerHalfClosedStream.add(messages);
                    // Same delay on one thread: after every answer scheduled before it.
                    later(answers::onCompleted);
                }
            };
        }

        private void later(Runnable task) {
            timer.schedule(task, LATE_MILLIS, TimeUnit.MILLISECONDS);
        }
    }

    /** Answers correctly, but completes each stream after {@code answers} answers, whatever is still to come. */
    private static final class CompletesAfter extends SquareRpcGrpc.SquareRpcImplBase {

        private final int answers;

        CompletesAfter(int answers) {
            this.answers = answers;
        }

        @Override
        public StreamObserver<Input> findSquareBiStream(StreamObserver<Output> out) {
            return new StreamObserver<>() {
                private int given;

                @Override
                public void onNext(Input input) {
                    if (given < answers) {
                        out.onNext(squareOf(input.getNumber()));
                        if (++given == answers) {
                            out.onCompleted();
                        }
                    }
                }

                @Override
                public void onError(Throwable t) {}

                @Override
                public void onCompleted() {}
            };
        }
    }

    /** Answers every message correctly, then, when the client half-closes, once more for a number never sent. */
    private static final class AnswersOneMoreAtTheEnd extends SquareRpcGrpc.SquareRpcImplBase {

        @Override
        public StreamObserver<Input> findSquareBiStream(StreamObserver<Output> out) {
            return new StreamObserver<>() {
                private int last;

                @Override
                public void onNext(Input input) {
                    last = input.getNumber();
                    out.onNext(squareOf(last));
                }

                @Override
                public void onError(Throwable t) {}

                @Override
                public void onCompleted() {
                    out.onNext(squareOf(last + 1));
                    out.onCompleted();
                }
            };
        }
    }

    private static Output squareOf(int number) {
        return Output.newBuilder()
                .setNumber(number)
                .setResult(Squares.square(number))
                .build();
    }

    /** Answers each stream message with the square of the number after it: right arithmetic, wrong question. */
    private static final class AnswersTheNextNumber extends SquareRpcGrpc.SquareRpcImplBase {

        @Override
        public StreamObserver<Input> findSquareBiStream(StreamObserver<Output> answers) {
            return new StreamObserver<>() {
                @Override
                public void onNext(Input input) {
                    int next = input.getNumber() + 1;
                    answers.onNext(Output.newBuilder()
                            .setNumber(next)
                            .setResult((long) next * next)
                            .build());
                }

                @Override
                public void onError(Throwable t) {}

                @Override
                public void onCompleted() {
                    answers.onCompleted();
                }
            };
        }
    }
}
