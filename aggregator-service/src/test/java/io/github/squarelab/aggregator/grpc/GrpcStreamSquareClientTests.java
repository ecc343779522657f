package io.github.squarelab.aggregator.grpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.squarelab.aggregator.fanout.DownstreamException;
import io.github.squarelab.aggregator.fanout.DownstreamException.Kind;
import io.github.squarelab.aggregator.fanout.Squares;
import io.github.squarelab.payload.ProtoPayloads;
import io.github.squarelab.payload.Shape;
import io.github.squarelab.proto.Input;
import io.github.squarelab.proto.Output;
import io.grpc.ManagedChannel;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import reactor.core.Disposable;

class GrpcStreamSquareClientTests {

    /** Generous, so that a busy machine cannot turn a correctness test into a timeout. */
    private static final Duration DEADLINE = Duration.ofSeconds(10);

    private static final Duration SHORT_DEADLINE = Duration.ofMillis(500);

    private final CountingRecorder recorder = new CountingRecorder();

    @Test
    void collectsEverySquareInOrderFromOneStream() throws Exception {
        try (InProcessSquareServer server = new InProcessSquareServer(new InProcessSquareServer.Correct())) {
            Squares squares =
                    client(server.channel).squares(5000, Shape.SMALL, recorder).block(Duration.ofSeconds(30));

            assertThat(squares.isComplete()).isTrue();
            assertThat(squares.toJson())
                    .startsWith("[{\"1\":1},{\"2\":4},{\"3\":9},")
                    .endsWith(",{\"5000\":25000000}]");
            assertThat(recorder.started).hasValue(5000);
            assertThat(recorder.answered).hasValue(5000);
            assertThat(recorder.unanswered).hasValue(0);
        }
    }

    @ParameterizedTest
    @EnumSource(
            value = Shape.class,
            names = {"WIDE", "DEEP", "COLLECTION"})
    void eachMessageCarriesItsNumbersPayloadAndEachEchoIsChecked(Shape shape) throws Exception {
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
            Squares squares =
                    client(server.channel).squares(300, shape, recorder).block(Duration.ofSeconds(30));

            assertThat(squares.toJson()).startsWith("[{\"1\":1},{\"2\":4},").endsWith(",{\"300\":90000}]");
            assertThat(rightPayloads).hasValue(300);
            assertThat(recorder.answered).hasValue(300);
            assertThat(recorder.unanswered).hasValue(0);
        }
    }

    @Test
    void anEchoOfAnotherPayloadIsABadAnswerAndEveryMessageSentIsFinished() throws Exception {
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
            assertThatThrownBy(() -> client(server.channel)
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
    void anAnswerWithoutTheEchoIsABadAnswer() throws Exception {
        InProcessSquareServer.Correct dropping = new InProcessSquareServer.Correct() {
            @Override
            public StreamObserver<Input> findSquareBiStream(StreamObserver<Output> answers) {
                return new AnswerSome(answers, Integer.MAX_VALUE);
            }
        };
        try (InProcessSquareServer server = new InProcessSquareServer(dropping)) {
            assertThatThrownBy(() -> client(server.channel)
                            .squares(10, Shape.COLLECTION, recorder)
                            .block(Duration.ofSeconds(20)))
                    .isInstanceOf(DownstreamException.class)
                    .satisfies(e -> assertThat(((DownstreamException) e).kind()).isEqualTo(Kind.BAD_ANSWER))
                    .hasMessage("the gRPC square service at square-test answered number 1 without the collection"
                            + " payload it was sent");
        }
    }

    @ParameterizedTest
    @EnumSource(
            value = Shape.class,
            names = {"SMALL", "COLLECTION"})
    void sendsNoMoreThanTheServerHasAskedFor(Shape shape) throws Exception {
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
            Disposable running =
                    client(server.channel).squares(1000, shape, recorder).subscribe();
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

    @Test
    void anUnreachableServiceIsUnavailable() {
        ManagedChannel nowhere = InProcessSquareServer.channelToNowhere();
        try {
            assertThatThrownBy(() ->
                            client(nowhere).squares(10, Shape.SMALL, recorder).block(Duration.ofSeconds(20)))
                    .isInstanceOf(DownstreamException.class)
                    .satisfies(e -> assertThat(((DownstreamException) e).kind()).isEqualTo(Kind.UNAVAILABLE));
            assertThat(recorder.answered.get() + recorder.unanswered.get()).isEqualTo(recorder.started.get());
        } finally {
            nowhere.shutdownNow();
        }
    }

    @Test
    void aStreamThatEndsEarlyIsABadAnswer() throws Exception {
        InProcessSquareServer.Correct quitter = new InProcessSquareServer.Correct() {
            @Override
            public StreamObserver<Input> findSquareBiStream(StreamObserver<Output> answers) {
                return new AnswerSome(answers, 3);
            }
        };
        try (InProcessSquareServer server = new InProcessSquareServer(quitter)) {
            assertThatThrownBy(() -> client(server.channel)
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
    void anAnswerOutOfOrderIsABadAnswer() throws Exception {
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
            assertThatThrownBy(() -> client(server.channel)
                            .squares(10, Shape.SMALL, recorder)
                            .block(Duration.ofSeconds(20)))
                    .isInstanceOf(DownstreamException.class)
                    .satisfies(e -> assertThat(((DownstreamException) e).kind()).isEqualTo(Kind.BAD_ANSWER))
                    .hasMessage("the gRPC square service at square-test answered number 3 where 2 was next");
        }
    }

    @Test
    void anAnswerBeforeItsNumberWasSentIsABadAnswer() throws Exception {
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
            assertThatThrownBy(() -> client(server.channel)
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
    void aStreamWithoutAnswersTimesOutAtTheDeadline() throws Exception {
        InProcessSquareServer.Correct silent = new InProcessSquareServer.Correct() {
            @Override
            public StreamObserver<Input> findSquareBiStream(StreamObserver<Output> answers) {
                return new AnswerSome(answers, 0);
            }
        };
        try (InProcessSquareServer server = new InProcessSquareServer(silent)) {
            long start = System.nanoTime();
            GrpcStreamSquareClient impatient =
                    new GrpcStreamSquareClient(server.channel, "square-test", SHORT_DEADLINE);
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

    private static GrpcStreamSquareClient client(io.grpc.Channel channel) {
        return new GrpcStreamSquareClient(channel, "square-test", DEADLINE);
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
}
