package io.github.squarelab.aggregator.grpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.squarelab.aggregator.fanout.DownstreamException;
import io.github.squarelab.aggregator.fanout.DownstreamException.Kind;
import io.github.squarelab.payload.ProtoPayloads;
import io.github.squarelab.payload.Shape;
import io.github.squarelab.proto.Input;
import io.github.squarelab.proto.Output;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import reactor.core.Disposable;

class GrpcUnarySquareClientTests {

    /** Generous, so that a busy machine cannot turn a correctness test into a timeout. */
    private static final Duration CALL_DEADLINE = Duration.ofSeconds(10);

    private static final Duration SHORT_DEADLINE = Duration.ofMillis(300);

    @Test
    void answersTheSquareFromTheService() throws Exception {
        try (InProcessSquareServer server = new InProcessSquareServer(new InProcessSquareServer.Correct())) {
            GrpcUnarySquareClient client = client(server.channel);

            assertThat(client.square(7, Shape.SMALL).block()).isEqualTo(49L);
            assertThat(client.square(65536, Shape.SMALL).block()).isEqualTo(4_294_967_296L);
            assertThat(client.square(-3, Shape.SMALL).block()).isEqualTo(9L);
        }
    }

    @ParameterizedTest
    @EnumSource(Shape.class)
    void sendsThePayloadOfTheShapeForTheNumberAndTakesTheSquareOnceItIsEchoed(Shape shape) throws Exception {
        List<Input> received = new CopyOnWriteArrayList<>();
        InProcessSquareServer.Correct recording = new InProcessSquareServer.Correct() {
            @Override
            public void findSquareUnary(Input request, StreamObserver<Output> answers) {
                received.add(request);
                super.findSquareUnary(request, answers);
            }
        };
        try (InProcessSquareServer server = new InProcessSquareServer(recording)) {
            assertThat(client(server.channel).square(7, shape).block()).isEqualTo(49L);
        }

        assertThat(received).hasSize(1);
        if (shape.hasPayload()) {
            assertThat(received.get(0))
                    .isEqualTo(Input.newBuilder()
                            .setNumber(7)
                            .setPayload(ProtoPayloads.of(shape, 7))
                            .build());
        } else {
            // The article's call, byte for byte: number = 7, nothing else.
            assertThat(received.get(0).toByteArray()).containsExactly(0x08, 7);
        }
    }

    @Test
    void anEchoOfAnotherPayloadIsABadAnswer() throws Exception {
        InProcessSquareServer.Correct mixedUp = new InProcessSquareServer.Correct() {
            @Override
            public void findSquareUnary(Input request, StreamObserver<Output> answers) {
                answers.onNext(InProcessSquareServer.square(request.getNumber()).toBuilder()
                        .setPayload(ProtoPayloads.of(Shape.COLLECTION, request.getNumber() + 1))
                        .build());
                answers.onCompleted();
            }
        };
        try (InProcessSquareServer server = new InProcessSquareServer(mixedUp)) {
            assertThatThrownBy(() ->
                            client(server.channel).square(7, Shape.COLLECTION).block())
                    .isInstanceOf(DownstreamException.class)
                    .satisfies(e -> assertThat(((DownstreamException) e).kind()).isEqualTo(Kind.BAD_ANSWER))
                    .hasMessage("the gRPC square service at square-test answered number 7 with a payload that differs"
                            + " from the one sent: collection[0].name 'item-8-0' where 'item-7-0' was sent");
        }
    }

    @Test
    void anAnswerWithoutTheEchoIsABadAnswer() throws Exception {
        InProcessSquareServer.Correct dropping = new InProcessSquareServer.Correct() {
            @Override
            public void findSquareUnary(Input request, StreamObserver<Output> answers) {
                answers.onNext(InProcessSquareServer.square(request.getNumber()));
                answers.onCompleted();
            }
        };
        try (InProcessSquareServer server = new InProcessSquareServer(dropping)) {
            assertThat(client(server.channel).square(7, Shape.SMALL).block()).isEqualTo(49L);
            assertThatThrownBy(
                            () -> client(server.channel).square(7, Shape.DEEP).block())
                    .isInstanceOf(DownstreamException.class)
                    .satisfies(e -> assertThat(((DownstreamException) e).kind()).isEqualTo(Kind.BAD_ANSWER))
                    .hasMessage("the gRPC square service at square-test answered number 7 without the deep payload it"
                            + " was sent");
        }
    }

    @Test
    void anUnreachableServiceIsUnavailable() throws Exception {
        ManagedChannel nowhere = InProcessSquareServer.channelToNowhere();
        try {
            assertThatThrownBy(() -> client(nowhere).square(7, Shape.SMALL).block())
                    .isInstanceOf(DownstreamException.class)
                    .satisfies(e -> assertThat(((DownstreamException) e).kind()).isEqualTo(Kind.UNAVAILABLE))
                    .hasMessageStartingWith("the gRPC square service at square-test is unavailable");
        } finally {
            nowhere.shutdownNow();
        }
    }

    @Test
    void aServiceThatDoesNotAnswerInTimeTimesOutAtTheCallDeadline() throws Exception {
        InProcessSquareServer.Correct silent = new InProcessSquareServer.Correct() {
            @Override
            public void findSquareUnary(Input request, StreamObserver<Output> answers) {
                // Never answers; the call must end by its deadline anyway.
            }
        };
        try (InProcessSquareServer server = new InProcessSquareServer(silent)) {
            long start = System.nanoTime();
            GrpcUnarySquareClient impatient = new GrpcUnarySquareClient(server.channel, "square-test", SHORT_DEADLINE);
            assertThatThrownBy(() -> impatient.square(7, Shape.SMALL).block(Duration.ofSeconds(5)))
                    .isInstanceOf(DownstreamException.class)
                    .satisfies(e -> assertThat(((DownstreamException) e).kind()).isEqualTo(Kind.TIMEOUT))
                    .hasMessage("no complete answer from the gRPC square service at square-test within 300 ms"
                            + " (aggregator.call-deadline)");
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(3));
        }
    }

    @Test
    void anAnswerForAnotherNumberIsABadAnswer() throws Exception {
        InProcessSquareServer.Correct confused = new InProcessSquareServer.Correct() {
            @Override
            public void findSquareUnary(Input request, StreamObserver<Output> answers) {
                answers.onNext(InProcessSquareServer.square(request.getNumber() + 1));
                answers.onCompleted();
            }
        };
        try (InProcessSquareServer server = new InProcessSquareServer(confused)) {
            assertThatThrownBy(
                            () -> client(server.channel).square(7, Shape.SMALL).block())
                    .isInstanceOf(DownstreamException.class)
                    .satisfies(e -> assertThat(((DownstreamException) e).kind()).isEqualTo(Kind.BAD_ANSWER))
                    .hasMessage("the gRPC square service at square-test answered number 8 where 7 was asked");
        }
    }

    @Test
    void anErrorStatusIsABadAnswer() throws Exception {
        InProcessSquareServer.Correct failing = new InProcessSquareServer.Correct() {
            @Override
            public void findSquareUnary(Input request, StreamObserver<Output> answers) {
                answers.onError(Status.INTERNAL.withDescription("boom").asRuntimeException());
            }
        };
        try (InProcessSquareServer server = new InProcessSquareServer(failing)) {
            assertThatThrownBy(
                            () -> client(server.channel).square(7, Shape.SMALL).block())
                    .isInstanceOf(DownstreamException.class)
                    .satisfies(e -> assertThat(((DownstreamException) e).kind()).isEqualTo(Kind.BAD_ANSWER))
                    .hasMessage("the gRPC square service at square-test answered INTERNAL: boom");
        }
    }

    @Test
    void cancellingTheMonoCancelsTheCallOnTheServer() throws Exception {
        CountDownLatch receivedOnServer = new CountDownLatch(1);
        CountDownLatch cancelledOnServer = new CountDownLatch(1);
        InProcessSquareServer.Correct silent = new InProcessSquareServer.Correct() {
            @Override
            public void findSquareUnary(Input request, StreamObserver<Output> answers) {
                ((ServerCallStreamObserver<Output>) answers).setOnCancelHandler(cancelledOnServer::countDown);
                receivedOnServer.countDown();
            }
        };
        try (InProcessSquareServer server = new InProcessSquareServer(silent)) {
            GrpcUnarySquareClient client =
                    new GrpcUnarySquareClient(server.channel, "square-test", Duration.ofSeconds(30));
            Disposable call = client.square(7, Shape.SMALL).subscribe();
            assertThat(receivedOnServer.await(5, TimeUnit.SECONDS)).isTrue();

            call.dispose();

            assertThat(cancelledOnServer.await(5, TimeUnit.SECONDS)).isTrue();
        }
    }

    private static GrpcUnarySquareClient client(io.grpc.Channel channel) {
        return new GrpcUnarySquareClient(channel, "square-test", CALL_DEADLINE);
    }
}
