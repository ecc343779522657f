package io.github.squarelab.aggregator.grpc;

import io.github.squarelab.aggregator.fanout.Transport;
import io.github.squarelab.aggregator.fanout.UnarySquareClient;
import io.github.squarelab.payload.Shape;
import io.github.squarelab.proto.Input;
import io.github.squarelab.proto.Output;
import io.github.squarelab.proto.SquareRpcGrpc;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;

/**
 * {@code vinsmath.SquareRpc/findSquareUnary}, one asynchronous call per square, each with a deadline, carrying the
 * payload of the request's shape and checking that the answer echoes it.
 */
public class GrpcUnarySquareClient implements UnarySquareClient {

    private final Channel channel;
    private final String target;
    private final Duration callDeadline;
    private final boolean plaintext;
    /** Whether any call has had an answer: a plaintext channel to a TLS port never gets one. */
    private final AtomicBoolean answered = new AtomicBoolean();

    /** @param channel a Channel rather than a ManagedChannel, so that tests can hand in an in-process one */
    public GrpcUnarySquareClient(Channel channel, String target, Duration callDeadline) {
        this(channel, target, callDeadline, false);
    }

    /** @param plaintext the channel speaks plaintext: a failure before any answer then says what a TLS port needs */
    public GrpcUnarySquareClient(Channel channel, String target, Duration callDeadline, boolean plaintext) {
        this.channel = channel;
        this.target = target;
        this.callDeadline = callDeadline;
        this.plaintext = plaintext;
    }

    @Override
    public Transport transport() {
        return Transport.GRPC_UNARY;
    }

    @Override
    public Mono<Long> square(int number, Shape shape) {
        return Mono.create(sink -> {
            ClientCall<Input, Output> call = channel.newCall(
                    SquareRpcGrpc.getFindSquareUnaryMethod(),
                    CallOptions.DEFAULT.withDeadlineAfter(callDeadline.toNanos(), TimeUnit.NANOSECONDS));
            CancelOnceStarted cancel = new CancelOnceStarted("the fan-out no longer needs this square");
            sink.onCancel(cancel::cancel);
            ClientCalls.asyncUnaryCall(
                    call, GrpcPayloads.input(number, shape), new Answer(number, shape, sink, cancel));
            cancel.started(call);
        });
    }

    /** Completes the sink with the one answer of one call. */
    private final class Answer implements StreamObserver<Output> {

        private final int number;
        private final Shape shape;
        private final MonoSink<Long> sink;
        private final CancelOnceStarted cancel;

        Answer(int number, Shape shape, MonoSink<Long> sink, CancelOnceStarted cancel) {
            this.number = number;
            this.shape = shape;
            this.sink = sink;
            this.cancel = cancel;
        }

        @Override
        public void onNext(Output output) {
            answered.set(true);
            if (output.getNumber() != number) {
                sink.error(GrpcFailures.badAnswer(
                        target, "number " + output.getNumber() + " where " + number + " was asked"));
                return;
            }
            String wrongEcho = GrpcPayloads.wrongEcho(number, shape, output);
            if (wrongEcho != null) {
                sink.error(GrpcFailures.badAnswer(target, wrongEcho));
            } else {
                sink.success(output.getResult());
            }
        }

        @Override
        public void onError(Throwable error) {
            // After our own cancel the CANCELLED status is expected and nobody is listening any more.
            if (!cancel.isCancelled()) {
                sink.error(GrpcFailures.translate(
                        error, target, callDeadline, "aggregator.call-deadline", plaintext && !answered.get()));
            }
        }

        @Override
        public void onCompleted() {
            // The answer was delivered in onNext; a call that ends without one fails through onError.
        }
    }
}
