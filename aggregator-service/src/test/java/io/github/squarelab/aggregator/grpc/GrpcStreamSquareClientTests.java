package io.github.squarelab.aggregator.grpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.squarelab.aggregator.fanout.DownstreamException;
import io.github.squarelab.aggregator.fanout.DownstreamException.Kind;
import io.github.squarelab.aggregator.fanout.Squares;
import io.github.squarelab.proto.Input;
import io.github.squarelab.proto.Output;
import io.grpc.ManagedChannel;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class GrpcStreamSquareClientTests {

    /** Generous, so that a busy machine cannot turn a correctness test into a timeout. */
    private static final Duration DEADLINE = Duration.ofSeconds(10);

    private static final Duration SHORT_DEADLINE = Duration.ofMillis(500);

    private final CountingRecorder recorder = new CountingRecorder();

    @Test
    void collectsEverySquareInOrderFromOneStream() throws Exception {
        try (InProcessSquareServer server = new InProcessSquareServer(new InProcessSquareServer.Correct())) {
            Squares squares = client(server.channel).squares(5000, recorder).block(Duration.ofSeconds(30));

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
    void anUnreachableServiceIsUnavailable() {
        ManagedChannel nowhere = InProcessSquareServer.channelToNowhere();
        try {
            assertThatThrownBy(() -> client(nowhere).squares(10, recorder).block(Duration.ofSeconds(20)))
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
            assertThatThrownBy(
                            () -> client(server.channel).squares(10, recorder).block(Duration.ofSeconds(20)))
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
            assertThatThrownBy(
                            () -> client(server.channel).squares(10, recorder).block(Duration.ofSeconds(20)))
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
            assertThatThrownBy(
                            () -> client(server.channel).squares(10, recorder).block(Duration.ofSeconds(20)))
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
            assertThatThrownBy(() -> impatient.squares(10, recorder).block(Duration.ofSeconds(5)))
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
