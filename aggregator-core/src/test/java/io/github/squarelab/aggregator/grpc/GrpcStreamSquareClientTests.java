package io.github.squarelab.aggregator.grpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.squarelab.aggregator.fanout.DownstreamException;
import io.github.squarelab.aggregator.fanout.DownstreamException.Kind;
import io.github.squarelab.aggregator.fanout.Squares;
import io.github.squarelab.aggregator.fanout.Transport;
import io.github.squarelab.payload.ProtoPayloads;
import io.github.squarelab.payload.Shape;
import io.github.squarelab.proto.Input;
import io.github.squarelab.proto.Output;
import io.grpc.Channel;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;
import reactor.core.Disposable;

/** The pipelined stream and ping-pong, one client with a window: what they share runs for both. */
class GrpcStreamSquareClientTests {

    /** Generous, so that a busy machine cannot turn a correctness test into a timeout. */
    private static final Duration DEADLINE = Duration.ofSeconds(10);

    private static final Duration SHORT_DEADLINE = Duration.ofMillis(500);

    private final CountingRecorder recorder = new CountingRecorder();

    @ParameterizedTest
    @EnumSource(
            value = Transport.class,
            names = {"GRPC_STREAM", "GRPC_PINGPONG"})
    void collectsEverySquareInOrderFromOneStream(Transport transport) throws Exception {
        try (InProcessSquareServer server = new InProcessSquareServer(new InProcessSquareServer.Correct())) {
            Squares squares = client(transport, server.channel)
                    .squares(5000, Shape.SMALL, recorder)
                    .block(Duration.ofSeconds(30));

            assertThat(squares.isComplete()).isTrue();
            assertThat(squares.toJson())
                    .startsWith("[{\"1\":1},{\"2\":4},{\"3\":9},")
                    .endsWith(",{\"5000\":25000000}]");
            assertThat(recorder.started).hasValue(5000);
            assertThat(recorder.answered).hasValue(5000);
            assertThat(recorder.unanswered).hasValue(0);
        }
    }

    @Test
    void theTransportIsNamedByTheWindow() {
        ManagedChannel nowhere = InProcessSquareServer.channelToNowhere();
        try {
            assertThat(GrpcStreamSquareClient.pipelined(nowhere, "square-test", DEADLINE)
                            .transport())
                    .isEqualTo(Transport.GRPC_STREAM);
            assertThat(GrpcStreamSquareClient.pingPong(nowhere, "square-test", DEADLINE)
                            .transport())
                    .isEqualTo(Transport.GRPC_PINGPONG);
        } finally {
            nowhere.shutdownNow();
        }
    }

    static Stream<Arguments> bothTransportsWithPayloads() {
        return Stream.of(Transport.GRPC_STREAM, Transport.GRPC_PINGPONG)
                .flatMap(transport -> Stream.of(Shape.WIDE, Shape.DEEP, Shape.COLLECTION)
                        .map(shape -> Arguments.of(transport, shape)));
    }

    @ParameterizedTest
    @MethodSource("bothTransportsWithPayloads")
    void eachMessageCarriesItsNumbersPayloadAndEachEchoIsChecked(Transport transport, Shape shape) throws Exception {
        AtomicInteger rightPayloads = new AtomicInteger();
        InProcessSquareServer.Correct checking = new InProcessSquareServer.Correct() {
            @Override
            public StreamObserver<Input> findSquareBiStream(StreamObserver<Output> answers) {
                return new AnswerSome(answers, Integer.MAX_VALUE) {
                    @Override
                    public void onNext(Input input) {
                        if (input.hasPayload()
                                && ProtoPayloads.difference(shape, input.getNumber(), input.getPayload()) == null) {
                            rightPayloads.incrementAndGet();
                        }
                        answers.onNext(InProcessSquareServer.answer(input));
                    }
                };
            }
        };
        try (InProcessSquareServer server = new InProcessSquareServer(checking)) {
            Squares squares = client(transport, server.channel)
                    .squares(300, shape, recorder)
                    .block(Duration.ofSeconds(30));

            assertThat(squares.toJson()).startsWith("[{\"1\":1},{\"2\":4},").endsWith(",{\"300\":90000}]");
            assertThat(rightPayloads).hasValue(300);
            assertThat(recorder.answered).hasValue(300);
            assertThat(recorder.unanswered).hasValue(0);
        }
    }

    @Test
    void pingPongSendsEachNumberOnlyOnceThePreviousSquareHasArrived() throws Exception {
        UnansweredCounter server = new UnansweredCounter();
        try (InProcessSquareServer squares = new InProcessSquareServer(server)) {
            Squares answer = client(Transport.GRPC_PINGPONG, squares.channel)
                    .squares(500, Shape.SMALL, recorder)
                    .block(Duration.ofSeconds(30));

            assertThat(answer.toJson()).startsWith("[{\"1\":1},{\"2\":4},").endsWith(",{\"500\":250000}]");
            assertThat(server.streams).hasValue(1);
            assertThat(server.received).hasValue(500);
            // The server answers a little late: a pipelined client would have sent more meanwhile.
            assertThat(server.mostUnanswered).hasValue(1);
            assertThat(recorder.started).hasValue(500);
            assertThat(recorder.answered).hasValue(500);
            assertThat(recorder.unanswered).hasValue(0);
        }
    }

    @Test
    void pingPongMessagesCarryTheirNumbersPayloadAndLeaveOnlyOnceThePreviousEchoHasArrived() throws Exception {
        UnansweredCounter server = new UnansweredCounter();
        try (InProcessSquareServer squares = new InProcessSquareServer(server)) {
            Squares answer = client(Transport.GRPC_PINGPONG, squares.channel)
                    .squares(50, Shape.COLLECTION, recorder)
                    .block(Duration.ofSeconds(30));

            assertThat(answer.toJson()).startsWith("[{\"1\":1},{\"2\":4},").endsWith(",{\"50\":2500}]");
            assertThat(server.received).hasValue(50);
            assertThat(server.withPayload).hasValue(50);
            assertThat(server.mostUnanswered).hasValue(1);
            assertThat(recorder.answered).hasValue(50);
        }
    }

    @ParameterizedTest
    @EnumSource(
            value = Transport.class,
            names = {"GRPC_STREAM", "GRPC_PINGPONG"})
    void anEchoOfAnotherPayloadIsABadAnswerAndEveryMessageSentIsFinished(Transport transport) throws Exception {
        InProcessSquareServer.Correct mixedUp = new InProcessSquareServer.Correct() {
            @Override
            public StreamObserver<Input> findSquareBiStream(StreamObserver<Output> answers) {
                return new AnswerSome(answers, Integer.MAX_VALUE) {
                    @Override
                    public void onNext(Input input) {
                        int number = input.getNumber();
                        answers.onNext(
                                number == 3
                                        ? InProcessSquareServer.square(3).toBuilder()
                                                .setPayload(ProtoPayloads.of(Shape.WIDE, 4))
                                                .build()
                                        : InProcessSquareServer.answer(input));
                    }
                };
            }
        };
        try (InProcessSquareServer server = new InProcessSquareServer(mixedUp)) {
            assertThatThrownBy(() -> client(transport, server.channel)
                            .squares(10, Shape.WIDE, recorder)
                            .block(Duration.ofSeconds(20)))
                    .isInstanceOf(DownstreamException.class)
                    .satisfies(e -> assertThat(((DownstreamException) e).kind()).isEqualTo(Kind.BAD_ANSWER))
                    .hasMessage("the gRPC square service at square-test answered number 3 with a payload that differs"
                            + " from the one sent: wide.name 'item-4-0' where 'item-3-0' was sent");
            assertThat(recorder.answered).hasValue(2);
            assertThat(recorder.answered.get() + recorder.unanswered.get()).isEqualTo(recorder.started.get());
        }
    }

    @Test
    void aPingPongEchoOfAnotherPayloadIsABadAnswerAndFinishesTheMessageInFlight() throws Exception {
        InProcessSquareServer.Correct mixedUp = new InProcessSquareServer.Correct() {
            @Override
            public StreamObserver<Input> findSquareBiStream(StreamObserver<Output> answers) {
                return new Answering(answers) {
                    @Override
                    public void onNext(Input input) {
                        Output right = InProcessSquareServer.answer(input);
                        answers.onNext(
                                input.getNumber() == 3
                                        ? right.toBuilder()
                                                .setPayload(ProtoPayloads.of(Shape.DEEP, 3).toBuilder()
                                                        .setDeep(ProtoPayloads.of(Shape.DEEP, 3).getDeep().toBuilder()
                                                                .setValue(0.5)))
                                                .build()
                                        : right);
                    }
                };
            }
        };
        try (InProcessSquareServer server = new InProcessSquareServer(mixedUp)) {
            assertThatThrownBy(() -> client(Transport.GRPC_PINGPONG, server.channel)
                            .squares(10, Shape.DEEP, recorder)
                            .block(Duration.ofSeconds(20)))
                    .isInstanceOf(DownstreamException.class)
                    .satisfies(e -> assertThat(((DownstreamException) e).kind()).isEqualTo(Kind.BAD_ANSWER))
                    .hasMessage("the gRPC square service at square-test answered number 3 with a payload that differs"
                            + " from the one sent: deep.value 0.5 where 3.0 was sent");
            assertThat(recorder.answered).hasValue(2);
            assertThat(recorder.unanswered).hasValue(1);
        }
    }

    @ParameterizedTest
    @CsvSource({
        "GRPC_STREAM, COLLECTION, collection",
        "GRPC_STREAM, WIDE, wide",
        "GRPC_PINGPONG, WIDE, wide",
        "GRPC_PINGPONG, COLLECTION, collection"
    })
    void anAnswerWithoutTheEchoIsABadAnswer(Transport transport, Shape shape, String payload) throws Exception {
        InProcessSquareServer.Correct dropping = new InProcessSquareServer.Correct() {
            @Override
            public StreamObserver<Input> findSquareBiStream(StreamObserver<Output> answers) {
                return new AnswerSome(answers, Integer.MAX_VALUE);
            }
        };
        try (InProcessSquareServer server = new InProcessSquareServer(dropping)) {
            assertThatThrownBy(() -> client(transport, server.channel)
                            .squares(10, shape, recorder)
                            .block(Duration.ofSeconds(20)))
                    .isInstanceOf(DownstreamException.class)
                    .satisfies(e -> assertThat(((DownstreamException) e).kind()).isEqualTo(Kind.BAD_ANSWER))
                    .hasMessage("the gRPC square service at square-test answered number 1 without the " + payload
                            + " payload it was sent");
        }
    }

    static Stream<Arguments> bothTransportsSmallAndLarge() {
        return Stream.of(Transport.GRPC_STREAM, Transport.GRPC_PINGPONG)
                .flatMap(transport ->
                        Stream.of(Shape.SMALL, Shape.COLLECTION).map(shape -> Arguments.of(transport, shape)));
    }

    @ParameterizedTest
    @MethodSource("bothTransportsSmallAndLarge")
    void sendsNoMoreThanTheServerHasAskedFor(Transport transport, Shape shape) throws Exception {
        AtomicInteger received = new AtomicInteger();
        InProcessSquareServer.Correct slow = new InProcessSquareServer.Correct() {
            @Override
            public StreamObserver<Input> findSquareBiStream(StreamObserver<Output> answers) {
                // Asks for 4 messages and never for more: the in-process client is ready for exactly that many.
                ServerCallStreamObserver<Output> server = (ServerCallStreamObserver<Output>) answers;
                server.disableAutoRequest();
                server.request(4);
                return new AnswerSome(answers, Integer.MAX_VALUE) {
                    @Override
                    public void onNext(Input input) {
                        received.incrementAndGet();
                        answers.onNext(InProcessSquareServer.answer(input));
                    }
                };
            }
        };
        try (InProcessSquareServer server = new InProcessSquareServer(slow)) {
            Disposable running = client(transport, server.channel)
                    .squares(1000, shape, recorder)
                    .subscribe();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (recorder.answered.get() < 4 && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            Thread.sleep(300);

            assertThat(received).hasValue(4);
            assertThat(recorder.started)
                    .as("messages sent, not piled up in a buffer")
                    .hasValue(4);
            running.dispose();
        }
    }

    @ParameterizedTest
    @EnumSource(
            value = Transport.class,
            names = {"GRPC_STREAM", "GRPC_PINGPONG"})
    void anUnreachableServiceIsUnavailableAndLeavesNothingInFlight(Transport transport) {
        ManagedChannel nowhere = InProcessSquareServer.channelToNowhere();
        try {
            assertThatThrownBy(() -> client(transport, nowhere)
                            .squares(10, Shape.SMALL, recorder)
                            .block(Duration.ofSeconds(20)))
                    .isInstanceOf(DownstreamException.class)
                    .satisfies(e -> assertThat(((DownstreamException) e).kind()).isEqualTo(Kind.UNAVAILABLE));
            assertThat(recorder.answered.get() + recorder.unanswered.get()).isEqualTo(recorder.started.get());
        } finally {
            nowhere.shutdownNow();
        }
    }

    @Test
    void aPipelinedStreamThatEndsEarlyIsABadAnswer() throws Exception {
        InProcessSquareServer.Correct quitter = new InProcessSquareServer.Correct() {
            @Override
            public StreamObserver<Input> findSquareBiStream(StreamObserver<Output> answers) {
                return new AnswerSome(answers, 3);
            }
        };
        try (InProcessSquareServer server = new InProcessSquareServer(quitter)) {
            assertThatThrownBy(() -> client(Transport.GRPC_STREAM, server.channel)
                            .squares(10, Shape.SMALL, recorder)
                            .block(Duration.ofSeconds(20)))
                    .isInstanceOf(DownstreamException.class)
                    .satisfies(e -> assertThat(((DownstreamException) e).kind()).isEqualTo(Kind.BAD_ANSWER))
                    .hasMessage("the gRPC square service at square-test answered only 3 of 10 squares"
                            + " before ending the stream");
            assertThat(recorder.answered).hasValue(3);
            assertThat(recorder.unanswered).hasValue(7);
        }
    }

    @Test
    void aPingPongStreamThatEndsEarlyIsABadAnswerAndEveryMessageSentIsFinished() throws Exception {
        InProcessSquareServer.Correct quitter = new InProcessSquareServer.Correct() {
            @Override
            public StreamObserver<Input> findSquareBiStream(StreamObserver<Output> answers) {
                return new Answering(answers) {
                    @Override
                    public void onNext(Input input) {
                        if (input.getNumber() <= 3) {
                            answers.onNext(InProcessSquareServer.square(input.getNumber()));
                        } else {
                            answers.onCompleted();
                        }
                    }
                };
            }
        };
        try (InProcessSquareServer server = new InProcessSquareServer(quitter)) {
            assertThatThrownBy(() -> client(Transport.GRPC_PINGPONG, server.channel)
                            .squares(10, Shape.SMALL, recorder)
                            .block(Duration.ofSeconds(20)))
                    .isInstanceOf(DownstreamException.class)
                    .hasMessage("the gRPC square service at square-test answered only 3 of 10 squares"
                            + " before ending the stream");
            assertThat(recorder.started).hasValue(4);
            assertThat(recorder.answered).hasValue(3);
            assertThat(recorder.unanswered).hasValue(1);
        }
    }

    @Test
    void aPipelinedAnswerOutOfOrderIsABadAnswer() throws Exception {
        InProcessSquareServer.Correct shuffler = new InProcessSquareServer.Correct() {
            @Override
            public StreamObserver<Input> findSquareBiStream(StreamObserver<Output> answers) {
                return new AnswerSome(answers, Integer.MAX_VALUE) {
                    @Override
                    public void onNext(Input input) {
                        answers.onNext(InProcessSquareServer.square(input.getNumber() == 2 ? 3 : input.getNumber()));
                    }
                };
            }
        };
        try (InProcessSquareServer server = new InProcessSquareServer(shuffler)) {
            assertThatThrownBy(() -> client(Transport.GRPC_STREAM, server.channel)
                            .squares(10, Shape.SMALL, recorder)
                            .block(Duration.ofSeconds(20)))
                    .isInstanceOf(DownstreamException.class)
                    .satisfies(e -> assertThat(((DownstreamException) e).kind()).isEqualTo(Kind.BAD_ANSWER))
                    .hasMessage("the gRPC square service at square-test answered number 3 where 2 was next");
        }
    }

    @Test
    void aPingPongAnswerForAnotherNumberIsABadAnswer() throws Exception {
        InProcessSquareServer.Correct wrong = new InProcessSquareServer.Correct() {
            @Override
            public StreamObserver<Input> findSquareBiStream(StreamObserver<Output> answers) {
                return new Answering(answers) {
                    @Override
                    public void onNext(Input input) {
                        answers.onNext(InProcessSquareServer.square(input.getNumber() == 3 ? 4 : input.getNumber()));
                    }
                };
            }
        };
        try (InProcessSquareServer server = new InProcessSquareServer(wrong)) {
            assertThatThrownBy(() -> client(Transport.GRPC_PINGPONG, server.channel)
                            .squares(10, Shape.SMALL, recorder)
                            .block(Duration.ofSeconds(20)))
                    .isInstanceOf(DownstreamException.class)
                    .satisfies(e -> assertThat(((DownstreamException) e).kind()).isEqualTo(Kind.BAD_ANSWER))
                    .hasMessage("the gRPC square service at square-test answered number 4 where 3 was in flight");
            assertThat(recorder.answered).hasValue(2);
            assertThat(recorder.unanswered).hasValue(1);
        }
    }

    @ParameterizedTest
    @EnumSource(
            value = Transport.class,
            names = {"GRPC_STREAM", "GRPC_PINGPONG"})
    void anAnswerBeforeItsNumberWasSentIsABadAnswer(Transport transport) throws Exception {
        InProcessSquareServer.Correct eager = new InProcessSquareServer.Correct() {
            @Override
            public StreamObserver<Input> findSquareBiStream(StreamObserver<Output> answers) {
                // Requesting no message keeps the in-process client from ever being ready to send one.
                ((ServerCallStreamObserver<Output>) answers).disableAutoRequest();
                answers.onNext(InProcessSquareServer.square(1));
                return new AnswerSome(answers, 0);
            }
        };
        try (InProcessSquareServer server = new InProcessSquareServer(eager)) {
            assertThatThrownBy(() -> client(transport, server.channel)
                            .squares(10, Shape.SMALL, recorder)
                            .block(Duration.ofSeconds(20)))
                    .isInstanceOf(DownstreamException.class)
                    .satisfies(e -> assertThat(((DownstreamException) e).kind()).isEqualTo(Kind.BAD_ANSWER))
                    .hasMessage("the gRPC square service at square-test answered number 1 before it was sent");
            assertThat(recorder.started).hasValue(0);
            assertThat(recorder.answered).hasValue(0);
            assertThat(recorder.unanswered).hasValue(0);
        }
    }

    @Test
    void aPipelinedStreamWithoutAnswersTimesOutAtTheDeadline() throws Exception {
        InProcessSquareServer.Correct silent = new InProcessSquareServer.Correct() {
            @Override
            public StreamObserver<Input> findSquareBiStream(StreamObserver<Output> answers) {
                return new AnswerSome(answers, 0);
            }
        };
        try (InProcessSquareServer server = new InProcessSquareServer(silent)) {
            long start = System.nanoTime();
            GrpcStreamSquareClient impatient =
                    GrpcStreamSquareClient.pipelined(server.channel, "square-test", SHORT_DEADLINE);
            assertThatThrownBy(
                            () -> impatient.squares(10, Shape.SMALL, recorder).block(Duration.ofSeconds(5)))
                    .isInstanceOf(DownstreamException.class)
                    .satisfies(e -> assertThat(((DownstreamException) e).kind()).isEqualTo(Kind.TIMEOUT))
                    .hasMessage("no complete answer from the gRPC square service at square-test within 500 ms"
                            + " (aggregator.deadline)");
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(3));
            assertThat(recorder.unanswered).hasValue(recorder.started.get());
        }
    }

    @Test
    void aSlowServiceIsATimeoutAtThePingPongStreamsDeadline() throws Exception {
        InProcessSquareServer.Correct silent = new InProcessSquareServer.Correct() {
            @Override
            public StreamObserver<Input> findSquareBiStream(StreamObserver<Output> answers) {
                return new Answering(answers) {
                    @Override
                    public void onNext(Input input) {}
                };
            }
        };
        try (InProcessSquareServer server = new InProcessSquareServer(silent)) {
            GrpcStreamSquareClient impatient =
                    GrpcStreamSquareClient.pingPong(server.channel, "square-test", Duration.ofMillis(300));

            long start = System.nanoTime();
            assertThatThrownBy(() -> impatient.squares(5, Shape.SMALL, recorder).block(Duration.ofSeconds(10)))
                    .isInstanceOf(DownstreamException.class)
                    .satisfies(e -> assertThat(((DownstreamException) e).kind()).isEqualTo(Kind.TIMEOUT))
                    .hasMessage("no complete answer from the gRPC square service at square-test within 300 ms"
                            + " (aggregator.deadline)");
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(3));
            assertThat(recorder.started).hasValue(1);
            assertThat(recorder.unanswered).hasValue(1);
        }
    }

    static Stream<Arguments> bothTransportsGoingAway() {
        return Stream.of(Transport.GRPC_STREAM, Transport.GRPC_PINGPONG)
                .flatMap(transport -> Stream.of(Status.Code.UNAVAILABLE, Status.Code.CANCELLED)
                        .map(code -> Arguments.of(transport, code)));
    }

    @ParameterizedTest
    @MethodSource("bothTransportsGoingAway")
    void aReplicaThatGoesAwayMidStreamIsLeftForANewStreamThatCarriesOn(Transport transport, Status.Code goingAway)
            throws Exception {
        AtomicInteger streams = new AtomicInteger();
        InProcessSquareServer.Correct leaving = new InProcessSquareServer.Correct() {
            @Override
            public StreamObserver<Input> findSquareBiStream(StreamObserver<Output> answers) {
                boolean first = streams.incrementAndGet() == 1;
                return new Answering(answers) {
                    @Override
                    public void onNext(Input input) {
                        if (first && input.getNumber() == 4) {
                            answers.onError(Status.fromCode(goingAway)
                                    .withDescription("shutting down")
                                    .asException());
                        } else if (!first || input.getNumber() < 4) {
                            answers.onNext(InProcessSquareServer.square(input.getNumber()));
                        }
                    }
                };
            }
        };
        try (InProcessSquareServer server = new InProcessSquareServer(leaving)) {
            Squares answer = client(transport, server.channel)
                    .squares(6, Shape.SMALL, recorder)
                    .block(Duration.ofSeconds(20));

            assertThat(answer.toJson()).isEqualTo("[{\"1\":1},{\"2\":4},{\"3\":9},{\"4\":16},{\"5\":25},{\"6\":36}]");
            assertThat(streams).hasValue(2);
            assertThat(recorder.answered).hasValue(6);
            assertThat(recorder.answered.get() + recorder.unanswered.get()).isEqualTo(recorder.started.get());
            if (transport == Transport.GRPC_PINGPONG) {
                // Only the message in flight when the replica left is sent twice.
                assertThat(recorder.started).hasValue(7);
                assertThat(recorder.unanswered).hasValue(1);
            }
        }
    }

    @ParameterizedTest
    @EnumSource(
            value = Transport.class,
            names = {"GRPC_STREAM", "GRPC_PINGPONG"})
    void aReplicaThatGoesAwayAgainOnTheNewStreamIsUnavailable(Transport transport) throws Exception {
        AtomicInteger streams = new AtomicInteger();
        InProcessSquareServer.Correct dying = new InProcessSquareServer.Correct() {
            @Override
            public StreamObserver<Input> findSquareBiStream(StreamObserver<Output> answers) {
                // The first stream fails at 3, the second at 5.
                int failAt = 1 + 2 * streams.incrementAndGet();
                return new Answering(answers) {
                    @Override
                    public void onNext(Input input) {
                        if (input.getNumber() == failAt) {
                            answers.onError(
                                    Status.UNAVAILABLE.withDescription("gone").asException());
                        } else if (input.getNumber() < failAt) {
                            answers.onNext(InProcessSquareServer.square(input.getNumber()));
                        }
                    }
                };
            }
        };
        try (InProcessSquareServer server = new InProcessSquareServer(dying)) {
            assertThatThrownBy(() -> client(transport, server.channel)
                            .squares(10, Shape.SMALL, recorder)
                            .block(Duration.ofSeconds(20)))
                    .isInstanceOf(DownstreamException.class)
                    .satisfies(e -> assertThat(((DownstreamException) e).kind()).isEqualTo(Kind.UNAVAILABLE))
                    .hasMessage("the gRPC square service at square-test is unavailable: gone");
            assertThat(streams).as("one failover, not more").hasValue(2);
            assertThat(recorder.answered).hasValue(4);
            assertThat(recorder.answered.get() + recorder.unanswered.get()).isEqualTo(recorder.started.get());
            if (transport == Transport.GRPC_PINGPONG) {
                // 1, 2, 3 on the first stream; 3, 4, 5 on the one new stream.
                assertThat(recorder.started).hasValue(6);
                assertThat(recorder.unanswered).hasValue(2);
            }
        }
    }

    @ParameterizedTest
    @EnumSource(
            value = Transport.class,
            names = {"GRPC_STREAM", "GRPC_PINGPONG"})
    void aStreamThatFailsForAnotherReasonIsABadAnswerAndNotResumed(Transport transport) throws Exception {
        AtomicInteger streams = new AtomicInteger();
        InProcessSquareServer.Correct failing = new InProcessSquareServer.Correct() {
            @Override
            public StreamObserver<Input> findSquareBiStream(StreamObserver<Output> answers) {
                streams.incrementAndGet();
                return new Answering(answers) {
                    private boolean failed;

                    @Override
                    public void onNext(Input input) {
                        if (!failed) {
                            failed = true;
                            answers.onError(
                                    Status.INTERNAL.withDescription("boom").asException());
                        }
                    }
                };
            }
        };
        try (InProcessSquareServer server = new InProcessSquareServer(failing)) {
            assertThatThrownBy(() -> client(transport, server.channel)
                            .squares(10, Shape.SMALL, recorder)
                            .block(Duration.ofSeconds(20)))
                    .isInstanceOf(DownstreamException.class)
                    .satisfies(e -> assertThat(((DownstreamException) e).kind()).isEqualTo(Kind.BAD_ANSWER))
                    .hasMessage("the gRPC square service at square-test answered INTERNAL: boom");
            assertThat(streams).hasValue(1);
            assertThat(recorder.unanswered).hasValue(recorder.started.get());
            if (transport == Transport.GRPC_PINGPONG) {
                assertThat(recorder.started).hasValue(1);
                assertThat(recorder.unanswered).hasValue(1);
            }
        }
    }

    @ParameterizedTest
    @EnumSource(
            value = Transport.class,
            names = {"GRPC_STREAM", "GRPC_PINGPONG"})
    void cancellingTheAnswerCancelsTheStreamAndFinishesTheMessagesInFlight(Transport transport) throws Exception {
        CountDownLatch received = new CountDownLatch(1);
        CountDownLatch cancelled = new CountDownLatch(1);
        InProcessSquareServer.Correct holding = new InProcessSquareServer.Correct() {
            @Override
            public StreamObserver<Input> findSquareBiStream(StreamObserver<Output> answers) {
                // The cancel handler, not onError: a pipelined stream may have half-closed already, and then gRPC
                // tells the server of the cancel only through it.
                ((ServerCallStreamObserver<Output>) answers).setOnCancelHandler(cancelled::countDown);
                return new Answering(answers) {
                    @Override
                    public void onNext(Input input) {
                        received.countDown();
                    }

                    @Override
                    public void onCompleted() {
                        // Holds the stream open after the client's half-close, as a slow server would.
                    }
                };
            }
        };
        try (InProcessSquareServer server = new InProcessSquareServer(holding)) {
            AtomicInteger signals = new AtomicInteger();
            Disposable answer = client(transport, server.channel)
                    .squares(10, Shape.SMALL, recorder)
                    .subscribe(squares -> signals.incrementAndGet(), error -> signals.incrementAndGet());
            assertThat(received.await(10, TimeUnit.SECONDS)).isTrue();

            answer.dispose();

            assertThat(cancelled.await(10, TimeUnit.SECONDS))
                    .as("the server sees the stream cancelled")
                    .isTrue();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            // Every message in flight is finished in one callback; wait for its end, not its start.
            while ((recorder.unanswered.get() < 1 || recorder.unanswered.get() != recorder.started.get())
                    && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            assertThat(recorder.unanswered).hasValue(recorder.started.get());
            if (transport == Transport.GRPC_PINGPONG) {
                assertThat(recorder.started).hasValue(1);
                assertThat(recorder.unanswered).hasValue(1);
            }
            assertThat(signals).as("nobody is told of a cancelled answer").hasValue(0);
        }
    }

    private static GrpcStreamSquareClient client(Transport transport, Channel channel) {
        return transport == Transport.GRPC_PINGPONG
                ? GrpcStreamSquareClient.pingPong(channel, "square-test", DEADLINE)
                : GrpcStreamSquareClient.pipelined(channel, "square-test", DEADLINE);
    }

    /** Answers the first {@code limit} messages, then completes once the client has. */
    private static class AnswerSome implements StreamObserver<Input> {
        final StreamObserver<Output> answers;
        private final int limit;
        private int answered;

        AnswerSome(StreamObserver<Output> answers, int limit) {
            this.answers = answers;
            this.limit = limit;
        }

        @Override
        public void onNext(Input input) {
            if (answered++ < limit) {
                answers.onNext(InProcessSquareServer.square(input.getNumber()));
            }
        }

        @Override
        public void onError(Throwable t) {}

        @Override
        public void onCompleted() {
            if (limit > 0) {
                answers.onCompleted();
            }
        }
    }

    /** A stream's server side that completes when the client does; tests override onNext. */
    private abstract static class Answering implements StreamObserver<Input> {

        final StreamObserver<Output> answers;

        Answering(StreamObserver<Output> answers) {
            this.answers = answers;
        }

        @Override
        public void onError(Throwable t) {}

        @Override
        public void onCompleted() {
            answers.onCompleted();
        }
    }

    /**
     * Answers each number 2 ms late, from another thread, so that a client that did not wait would have
     * sent more meanwhile; keeps the most numbers it held unanswered at once.
     */
    private static final class UnansweredCounter extends InProcessSquareServer.Correct {

        final AtomicInteger streams = new AtomicInteger();
        final AtomicInteger received = new AtomicInteger();
        final AtomicInteger withPayload = new AtomicInteger();
        final AtomicInteger mostUnanswered = new AtomicInteger();
        private final AtomicInteger unanswered = new AtomicInteger();
        /** One thread: a stream's answers and its end leave in order. */
        private final ScheduledExecutorService later = Executors.newSingleThreadScheduledExecutor();

        @Override
        public StreamObserver<Input> findSquareBiStream(StreamObserver<Output> answers) {
            streams.incrementAndGet();
            return new Answering(answers) {
                @Override
                public void onNext(Input input) {
                    received.incrementAndGet();
                    if (input.hasPayload()) {
                        withPayload.incrementAndGet();
                    }
                    mostUnanswered.accumulateAndGet(unanswered.incrementAndGet(), Math::max);
                    later.schedule(
                            () -> {
                                unanswered.decrementAndGet();
                                answers.onNext(InProcessSquareServer.answer(input));
                            },
                            2,
                            TimeUnit.MILLISECONDS);
                }

                @Override
                public void onCompleted() {
                    later.schedule(answers::onCompleted, 2, TimeUnit.MILLISECONDS);
                }
            };
        }
    }
}
