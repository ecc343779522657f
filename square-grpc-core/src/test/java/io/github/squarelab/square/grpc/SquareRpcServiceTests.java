package io.github.squarelab.square.grpc;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.squarelab.payload.ProtoPayloads;
import io.github.squarelab.payload.Shape;
import io.github.squarelab.proto.Input;
import io.github.squarelab.proto.Output;
import io.github.squarelab.proto.SquareRpcGrpc;
import io.grpc.ForwardingServerCallListener.SimpleForwardingServerCallListener;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.grpc.stub.StreamObserver;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;

/** The service on an in-process server: exact answers, stream order, completion and flow control. */
class SquareRpcServiceTests {

    private final AtomicInteger messagesReadByServer = new AtomicInteger();
    private Server server;
    private ManagedChannel channel;

    @BeforeEach
    void startInProcessServer() throws Exception {
        String name = InProcessServerBuilder.generateName();
        server = InProcessServerBuilder.forName(name)
                .directExecutor()
                .addService(ServerInterceptors.intercept(new SquareRpcService(), new CountingInterceptor()))
                .build()
                .start();
        channel = InProcessChannelBuilder.forName(name).directExecutor().build();
    }

    @AfterEach
    void shutDown() throws Exception {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }

    @ParameterizedTest
    @CsvSource({
        "7, 49",
        "-3, 9",
        "0, 0",
        "65536, 4294967296",
        "2147483647, 4611686014132420609",
        "-2147483648, 4611686018427387904"
    })
    void unaryAnswersTheSquareAndEchoesTheNumber(int number, long square) {
        Output output = SquareRpcGrpc.newBlockingStub(channel)
                .withDeadlineAfter(5, TimeUnit.SECONDS)
                .findSquareUnary(Input.newBuilder().setNumber(number).build());

        assertThat(output.getNumber()).isEqualTo(number);
        assertThat(output.getResult()).isEqualTo(square);
    }

    @Test
    void anInputWithoutAPayloadIsAnsweredWithoutOneByteForByteAsTheArticlesService() {
        Output output = SquareRpcGrpc.newBlockingStub(channel)
                .withDeadlineAfter(5, TimeUnit.SECONDS)
                .findSquareUnary(Input.newBuilder().setNumber(7).build());

        assertThat(output.hasPayload()).isFalse();
        // number = 7 (field 1, varint), result = 49 (field 2, varint), and nothing else.
        assertThat(output.toByteArray()).containsExactly(0x08, 7, 0x10, 49);
    }

    @ParameterizedTest
    @EnumSource(
            value = Shape.class,
            names = {"WIDE", "DEEP", "COLLECTION"})
    void unaryEchoesThePayloadWithTheSquare(Shape shape) {
        Input input = Input.newBuilder()
                .setNumber(7)
                .setPayload(ProtoPayloads.of(shape, 7))
                .build();

        Output output = SquareRpcGrpc.newBlockingStub(channel)
                .withDeadlineAfter(5, TimeUnit.SECONDS)
                .findSquareUnary(input);

        assertThat(output)
                .isEqualTo(Output.newBuilder()
                        .setNumber(7)
                        .setResult(49)
                        .setPayload(ProtoPayloads.of(shape, 7))
                        .build());
    }

    @ParameterizedTest
    @EnumSource(
            value = Shape.class,
            names = {"WIDE", "DEEP", "COLLECTION"})
    void streamEchoesEachMessagesPayloadInOrder(Shape shape) throws Exception {
        RecordingObserver answers = new RecordingObserver();
        StreamObserver<Input> questions = SquareRpcGrpc.newStub(channel).findSquareBiStream(answers);

        for (int i = 1; i <= 300; i++) {
            // Every third message carries none, as the article's would: each answer matches its own question.
            Input.Builder input = Input.newBuilder().setNumber(i);
            if (i % 3 != 0) {
                input.setPayload(ProtoPayloads.of(shape, i));
            }
            questions.onNext(input.build());
        }
        questions.onCompleted();

        assertThat(answers.done.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(answers.error.get()).isNull();
        assertThat(answers.outputs).hasSize(300);
        for (int i = 1; i <= 300; i++) {
            Output output = answers.outputs.get(i - 1);
            assertThat(output.getNumber()).isEqualTo(i);
            assertThat(output.getResult()).isEqualTo((long) i * i);
            assertThat(output.hasPayload()).isEqualTo(i % 3 != 0);
            if (i % 3 != 0) {
                assertThat(ProtoPayloads.difference(shape, i, output.getPayload()))
                        .isNull();
            }
        }
    }

    @Test
    void streamAnswersEveryMessageInOrderAndCompletesAfterTheClient() throws Exception {
        RecordingObserver answers = new RecordingObserver();
        StreamObserver<Input> questions = SquareRpcGrpc.newStub(channel).findSquareBiStream(answers);

        for (int i = 1; i <= 1000; i++) {
            questions.onNext(Input.newBuilder().setNumber(i).build());
        }
        questions.onCompleted();

        assertThat(answers.done.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(answers.error.get()).isNull();
        assertThat(answers.outputs).hasSize(1000);
        for (int i = 1; i <= 1000; i++) {
            Output output = answers.outputs.get(i - 1);
            assertThat(output.getNumber()).isEqualTo(i);
            assertThat(output.getResult()).isEqualTo((long) i * i);
        }
    }

    @Test
    void streamWithNoMessagesCompletesWithNoAnswers() throws Exception {
        RecordingObserver answers = new RecordingObserver();
        SquareRpcGrpc.newStub(channel).findSquareBiStream(answers).onCompleted();

        assertThat(answers.done.await(5, TimeUnit.SECONDS)).isTrue();
        assertThat(answers.error.get()).isNull();
        assertThat(answers.outputs).isEmpty();
    }

    @ParameterizedTest
    @EnumSource(
            value = Shape.class,
            names = {"SMALL", "COLLECTION"})
    void serverStopsReadingWhileTheClientIsNotReadingAnswers(Shape shape) throws Exception {
        AtomicReference<ClientCallStreamObserver<Input>> questions = new AtomicReference<>();
        RecordingObserver answers = new RecordingObserver() {
            @Override
            public void beforeStart(ClientCallStreamObserver<Input> requestStream) {
                requestStream.disableAutoRequestWithInitial(0);
                questions.set(requestStream);
            }
        };
        SquareRpcGrpc.newStub(channel).findSquareBiStream(answers);
        for (int i = 1; i <= 100; i++) {
            Input.Builder input = Input.newBuilder().setNumber(i);
            if (shape.hasPayload()) {
                input.setPayload(ProtoPayloads.of(shape, i));
            }
            questions.get().onNext(input.build());
        }

        // Nobody reads the answers yet: the server squares what it has room to send and then stops reading.
        assertThat(messagesReadByServer.get()).isLessThanOrEqualTo(2);

        questions.get().request(100);
        questions.get().onCompleted();
        assertThat(answers.done.await(5, TimeUnit.SECONDS)).isTrue();
        assertThat(answers.error.get()).isNull();
        assertThat(messagesReadByServer.get()).isEqualTo(100);
        assertThat(answers.outputs)
                .extracting(Output::getNumber)
                .containsExactlyElementsOf(
                        java.util.stream.IntStream.rangeClosed(1, 100).boxed().toList());
        for (Output output : answers.outputs) {
            assertThat(output.hasPayload()).isEqualTo(shape.hasPayload());
            if (shape.hasPayload()) {
                assertThat(ProtoPayloads.difference(shape, output.getNumber(), output.getPayload()))
                        .isNull();
            }
        }
    }

    /** Records answers; fails the test through {@code error} rather than by throwing on a gRPC thread. */
    private static class RecordingObserver implements ClientResponseObserver<Input, Output> {
        final List<Output> outputs = new CopyOnWriteArrayList<>();
        final AtomicReference<Throwable> error = new AtomicReference<>();
        final CountDownLatch done = new CountDownLatch(1);

        @Override
        public void beforeStart(ClientCallStreamObserver<Input> requestStream) {}

        @Override
        public void onNext(Output output) {
            outputs.add(output);
        }

        @Override
        public void onError(Throwable t) {
            error.set(t);
            done.countDown();
        }

        @Override
        public void onCompleted() {
            done.countDown();
        }
    }

    /** Counts the messages the service has actually taken off the wire. */
    private class CountingInterceptor implements ServerInterceptor {
        @Override
        public <I, O> ServerCall.Listener<I> interceptCall(
                ServerCall<I, O> call, Metadata headers, ServerCallHandler<I, O> next) {
            return new SimpleForwardingServerCallListener<>(next.startCall(call, headers)) {
                @Override
                public void onMessage(I message) {
                    messagesReadByServer.incrementAndGet();
                    super.onMessage(message);
                }
            };
        }
    }
}
