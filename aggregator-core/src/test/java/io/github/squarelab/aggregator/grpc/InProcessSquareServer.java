package io.github.squarelab.aggregator.grpc;

import io.github.squarelab.proto.Input;
import io.github.squarelab.proto.Output;
import io.github.squarelab.proto.SquareRpcGrpc;
import io.grpc.BindableService;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.util.concurrent.TimeUnit;

/** A real gRPC server and channel in this JVM, serving the given implementation of SquareRpc. */
final class InProcessSquareServer implements AutoCloseable {

    private final Server server;
    final ManagedChannel channel;

    InProcessSquareServer(BindableService service) throws IOException {
        String name = InProcessServerBuilder.generateName();
        server =
                InProcessServerBuilder.forName(name).addService(service).build().start();
        channel = InProcessChannelBuilder.forName(name).build();
    }

    /** A channel to a server name nobody serves: calls fail as when the service is down. */
    static ManagedChannel channelToNowhere() {
        return InProcessChannelBuilder.forName(InProcessServerBuilder.generateName())
                .build();
    }

    @Override
    public void close() throws InterruptedException {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }

    static Output square(int number) {
        return Output.newBuilder()
                .setNumber(number)
                .setResult((long) number * number)
                .build();
    }

    /** The right answer to an Input: its square, and its payload echoed when it has one, as the real service answers. */
    static Output answer(Input input) {
        Output.Builder output = square(input.getNumber()).toBuilder();
        if (input.hasPayload()) {
            output.setPayload(input.getPayload());
        }
        return output.build();
    }

    /**
     * Answers correctly: unary, and a stream that answers each message and completes after the client; each answer
     * echoes its Input's payload.
     */
    static class Correct extends SquareRpcGrpc.SquareRpcImplBase {

        @Override
        public void findSquareUnary(Input request, StreamObserver<Output> answers) {
            answers.onNext(answer(request));
            answers.onCompleted();
        }

        @Override
        public StreamObserver<Input> findSquareBiStream(StreamObserver<Output> answers) {
            return new StreamObserver<>() {
                @Override
                public void onNext(Input input) {
                    answers.onNext(answer(input));
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
