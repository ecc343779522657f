package io.github.squarelab.aggregator.grpc;

import io.github.squarelab.stream.SendTimes;
import io.github.squarelab.aggregator.fanout.CallRecorder;
import io.github.squarelab.aggregator.fanout.Squares;
import io.github.squarelab.aggregator.fanout.StreamSquareClient;
import io.github.squarelab.proto.Input;
import io.github.squarelab.proto.Output;
import io.github.squarelab.proto.SquareRpcGrpc;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ClientResponseObserver;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;

/**
 * {@code vinsmath.SquareRpc/findSquareBiStream}: the numbers 1..n as n messages on one stream, and their
 * squares collected in order. The stream as a whole has the request's deadline.
 */
public class GrpcStreamSquareClient implements StreamSquareClient {

    private final Channel channel;
    private final String target;
    private final Duration deadline;

    /** @param channel a Channel rather than a ManagedChannel, so that tests can hand in an in-process one */
    public GrpcStreamSquareClient(Channel channel, String target, Duration deadline) {
        this.channel = channel;
        this.target = target;
        this.deadline = deadline;
    }

    @Override
    public Mono<Squares> squares(int n, CallRecorder recorder) {
        return Mono.create(sink -> {
            ClientCall<Input, Output> call = channel.newCall(SquareRpcGrpc.getFindSquareBiStreamMethod(),
                CallOptions.DEFAULT.withDeadlineAfter(deadline.toNanos(), TimeUnit.NANOSECONDS));
            Exchange exchange = new Exchange(n, recorder, sink);
            sink.onCancel(() -> exchange.cancel(call));
            ClientCalls.asyncBidiStreamingCall(call, exchange);
        });
    }

    /**
     * One stream. Sends only while the transport is ready for more (grpc-java's isReady/onReady
     * back-pressure, as in its ManualFlowControlClient), so nothing queues up in memory when the server
     * reads slower than we write. grpc-java runs the callbacks of one call one at a time, so the plain
     * fields need no lock; {@code cancelled} is set from outside, hence volatile.
     */
    private final class Exchange implements ClientResponseObserver<Input, Output> {

        private final int n;
        private final CallRecorder recorder;
        private final MonoSink<Squares> sink;
        private final Squares squares;
        private final SendTimes sendTimes = new SendTimes();
        private ClientCallStreamObserver<Input> requests;
        private int nextNumber = 1;
        /** All n sent and the sending side closed. */
        private boolean halfClosed;
        /** The sink has been told the outcome; later callbacks are ignored. */
        private boolean finished;
        private volatile boolean cancelled;

        Exchange(int n, CallRecorder recorder, MonoSink<Squares> sink) {
            this.n = n;
            this.recorder = recorder;
            this.sink = sink;
            this.squares = new Squares(n);
        }

        @Override
        public void beforeStart(ClientCallStreamObserver<Input> requests) {
            this.requests = requests;
            requests.setOnReadyHandler(this::sendWhileReady);
        }

        private void sendWhileReady() {
            while (nextNumber <= n && requests.isReady() && !finished) {
                sendTimes.add(System.nanoTime());
                recorder.started();
                requests.onNext(Input.newBuilder().setNumber(nextNumber++).build());
            }
            if (nextNumber > n && !halfClosed && !finished) {
                halfClosed = true;
                requests.onCompleted();
            }
        }

        @Override
        public void onNext(Output output) {
            if (finished) {
                return;
            }
            int expected = squares.size() + 1;
            if (squares.isComplete() || output.getNumber() != expected) {
                String what = squares.isComplete() ? "more than " + n + " answers"
                    : "number " + output.getNumber() + " where " + expected + " was next";
                fail(GrpcFailures.badAnswer(target, what));
                requests.cancel("wrong answer from the square service", null);
                return;
            }
            squares.add(output.getResult());
            recorder.finished(System.nanoTime() - sendTimes.poll(), true);
        }

        @Override
        public void onError(Throwable error) {
            if (!finished) {
                fail(GrpcFailures.translate(error, target, deadline, "aggregator.deadline"));
            }
        }

        @Override
        public void onCompleted() {
            if (finished) {
                return;
            }
            if (squares.isComplete()) {
                finished = true;
                sink.success(squares);
            } else {
                fail(GrpcFailures.badAnswer(target, "only " + squares.size() + " of " + n
                    + " squares before ending the stream"));
            }
        }

        void cancel(ClientCall<Input, Output> call) {
            cancelled = true;
            call.cancel("the fan-out no longer needs these squares", null);
        }

        private void fail(RuntimeException failure) {
            finished = true;
            long now = System.nanoTime();
            while (!sendTimes.isEmpty()) {
                recorder.finished(now - sendTimes.poll(), false);
            }
            // After our own cancel nobody is listening for the error any more.
            if (!cancelled) {
                sink.error(failure);
            }
        }
    }
}
