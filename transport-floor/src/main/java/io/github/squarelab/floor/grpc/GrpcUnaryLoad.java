package io.github.squarelab.floor.grpc;

import io.github.squarelab.floor.ClientSettings;
import io.github.squarelab.floor.FloorTls;
import io.github.squarelab.floor.Squares;
import io.github.squarelab.floor.measure.FloorFailure;
import io.github.squarelab.floor.measure.Load;
import io.github.squarelab.floor.measure.MeasuredInterval;
import io.github.squarelab.floor.measure.Negotiated;
import io.github.squarelab.proto.Input;
import io.github.squarelab.proto.Output;
import io.github.squarelab.proto.SquareRpcGrpc;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * {@code findSquareUnary} on one channel with {@code inFlight} calls in flight at all times: each checked
 * answer starts the next call, as grpc-java's AsyncClient benchmark does.
 */
public final class GrpcUnaryLoad implements Load {

    private final ManagedChannel channel;
    private final int inFlight;
    private final Duration callDeadline;
    private final CountDownLatch callChainsEnded;
    private volatile boolean stopping;
    private volatile boolean givenUp;
    private MeasuredInterval interval;
    private final Optional<FloorTls> tls;
    private Optional<Negotiated> negotiated = Optional.empty();

    /**
     * @param target the server, as a grpc-java target such as 127.0.0.1:6565
     * @param inFlight how many calls to keep in flight
     * @param callDeadline the deadline of each call
     */
    public GrpcUnaryLoad(String target, int inFlight, Duration callDeadline) {
        this(target, inFlight, callDeadline, Optional.empty());
    }

    /** @param tls under TLS, the CA to trust and any client certificate; else empty */
    public GrpcUnaryLoad(String target, int inFlight, Duration callDeadline, Optional<FloorTls> tls) {
        this.tls = tls;
        this.channel = GrpcChannels.withShortCallbacks(target, tls);
        this.inFlight = inFlight;
        this.callDeadline = callDeadline;
        this.callChainsEnded = new CountDownLatch(inFlight);
    }

    public static String io() {
        return GrpcChannels.io();
    }

    @Override
    public Optional<Negotiated> negotiated() {
        return negotiated;
    }

    @Override
    public void start(MeasuredInterval interval) throws FloorFailure {
        this.interval = interval;
        negotiated = GrpcChannels.handshake(channel, tls, ClientSettings.FIRST_ANSWER_TIMEOUT, "grpc_unary");
        for (int chain = 0; chain < inFlight; chain++) {
            call(Squares.first(chain));
        }
    }

    /** Each chain ends with its last answer; after {@code timeout} shutting the channel down cancels the rest. */
    @Override
    public void stop(Duration timeout) throws InterruptedException {
        stopping = true;
        Load.awaitEnd(
                interval,
                callChainsEnded,
                timeout,
                () -> {
                    givenUp = true;
                    channel.shutdownNow();
                },
                "grpc_unary calls did not end even when cancelled");
    }

    @Override
    public void close() {
        GrpcChannels.close(channel);
    }

    private void call(int number) {
        ClientCall<Input, Output> call = channel.newCall(
                SquareRpcGrpc.getFindSquareUnaryMethod(),
                CallOptions.DEFAULT.withDeadlineAfter(callDeadline.toNanos(), TimeUnit.NANOSECONDS));
        ClientCalls.asyncUnaryCall(call, Input.newBuilder().setNumber(number).build(), new Answer(number));
    }

    /** The answer to one call: checked, reported, and followed by the next call. */
    private final class Answer implements StreamObserver<Output> {

        private final int number;
        private final long sentNanos = System.nanoTime();
        private Output output;

        Answer(int number) {
            this.number = number;
        }

        @Override
        public void onNext(Output output) {
            this.output = output;
        }

        @Override
        public void onError(Throwable error) {
            if (givenUp) {
                interval.unanswered(1);
            } else {
                interval.fail("grpc_unary call for " + number + " failed: " + Status.fromThrowable(error));
            }
            callChainsEnded.countDown();
        }

        @Override
        public void onCompleted() {
            long latency = System.nanoTime() - sentNanos;
            long square = Squares.square(number);
            if (output.getNumber() != number || output.getResult() != square) {
                interval.fail("grpc_unary answered number " + output.getNumber() + " with " + output.getResult()
                        + " when asked for " + number + " (" + square + ")");
                callChainsEnded.countDown();
                return;
            }
            interval.answered(latency);
            if (stopping || interval.hasFailed()) {
                callChainsEnded.countDown();
            } else {
                call(Squares.next(number));
            }
        }
    }
}
