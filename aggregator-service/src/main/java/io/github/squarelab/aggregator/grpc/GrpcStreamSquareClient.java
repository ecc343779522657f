package io.github.squarelab.aggregator.grpc;

import io.github.squarelab.aggregator.fanout.CallRecorder;
import io.github.squarelab.aggregator.fanout.Squares;
import io.github.squarelab.aggregator.fanout.StreamSquareClient;
import io.github.squarelab.aggregator.fanout.Transport;
import io.github.squarelab.proto.Input;
import io.github.squarelab.proto.Output;
import io.github.squarelab.proto.SquareRpcGrpc;
import io.github.squarelab.stream.SendTimes;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.Deadline;
import io.grpc.Status;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ClientResponseObserver;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;

/**
 * {@code vinsmath.SquareRpc/findSquareBiStream}: the numbers 1..n as n messages on one stream, and their
 * squares collected in order. The stream as a whole has the request's deadline. If the stream fails
 * because its replica went away mid-stream, one new stream, which round_robin puts on another
 * replica, carries the numbers not yet answered, within the same deadline.
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
    public Transport transport() {
        return Transport.GRPC_STREAM;
    }

    @Override
    public Mono<Squares> squares(int n, CallRecorder recorder) {
        return Mono.create(sink -> {
            Exchange exchange =
                    new Exchange(n, recorder, sink, Deadline.after(deadline.toNanos(), TimeUnit.NANOSECONDS));
            sink.onCancel(exchange::cancel);
            exchange.open();
        });
    }

    /**
     * One request's squares, on one stream or, after a failover, two. Sends only while the transport is
     * ready for more (grpc-java's isReady/onReady back-pressure, as in its ManualFlowControlClient), so
     * nothing queues up in memory when the server reads slower than we write. grpc-java runs the callbacks
     * of one call one at a time, and the second stream is opened from the first one's last callback, so
     * the plain fields need no lock; {@code cancelled} and {@code call} are touched from outside, hence
     * volatile.
     */
    private final class Exchange {

        private final int n;
        private final CallRecorder recorder;
        private final MonoSink<Squares> sink;
        private final Deadline streamDeadline;
        private final Squares squares;
        private final SendTimes sendTimes = new SendTimes();
        private volatile ClientCall<Input, Output> call;
        private ClientCallStreamObserver<Input> requests;
        private int nextNumber = 1;
        /** Every number sent and the sending side closed, on the current stream. */
        private boolean halfClosed;
        /** The one new stream after a failover has been opened. */
        private boolean resumed;
        /** The sink has been told the outcome; later callbacks are ignored. */
        private boolean finished;

        private volatile boolean cancelled;

        Exchange(int n, CallRecorder recorder, MonoSink<Squares> sink, Deadline streamDeadline) {
            this.n = n;
            this.recorder = recorder;
            this.sink = sink;
            this.streamDeadline = streamDeadline;
            this.squares = new Squares(n);
        }

        /** Opens a stream that sends the numbers from {@code nextNumber} on. */
        void open() {
            ClientCall<Input, Output> next = channel.newCall(
                    SquareRpcGrpc.getFindSquareBiStreamMethod(), CallOptions.DEFAULT.withDeadline(streamDeadline));
            call = next;
            ClientCalls.asyncBidiStreamingCall(next, new Leg());
            if (cancelled) {
                next.cancel("the fan-out no longer needs these squares", null);
            }
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

        private void onAnswer(Output output) {
            if (finished) {
                return;
            }
            String wrong = wrongAnswer(output);
            if (wrong != null) {
                fail(GrpcFailures.badAnswer(target, wrong));
                requests.cancel("wrong answer from the square service", null);
                return;
            }
            squares.add(output.getResult());
            recorder.finished(System.nanoTime() - sendTimes.poll(), true);
        }

        /** What is wrong with an answer, or null when it is the next one due for a number already sent. */
        private String wrongAnswer(Output output) {
            int expected = squares.size() + 1;
            if (squares.isComplete()) {
                return "more than " + n + " answers";
            }
            if (output.getNumber() != expected) {
                return "number " + output.getNumber() + " where " + expected + " was next";
            }
            // A number not sent yet has no send time, and polling an empty SendTimes would corrupt it.
            if (sendTimes.isEmpty()) {
                return "number " + expected + " before it was sent";
            }
            return null;
        }

        private void onStreamError(Throwable error) {
            if (finished) {
                return;
            }
            if (squares.isComplete()) {
                // Every answer arrived before the replica went away; only the stream's end was lost.
                succeed();
            } else if (!resumed && !cancelled && replicaWentAway(error)) {
                resume();
            } else {
                fail(GrpcFailures.translate(error, target, deadline, "aggregator.deadline"));
            }
        }

        /** UNAVAILABLE: the connection broke; CANCELLED, not by us: a replica shutting down cuts its streams. */
        private boolean replicaWentAway(Throwable error) {
            Status.Code code = Status.fromThrowable(error).getCode();
            return code == Status.Code.UNAVAILABLE || code == Status.Code.CANCELLED;
        }

        /** The numbers sent on the failed stream and not answered are finished as failed, and sent again. */
        private void resume() {
            resumed = true;
            finishUnanswered();
            nextNumber = squares.size() + 1;
            halfClosed = false;
            open();
        }

        private void onStreamCompleted() {
            if (finished) {
                return;
            }
            if (squares.isComplete()) {
                succeed();
            } else {
                fail(GrpcFailures.badAnswer(
                        target, "only " + squares.size() + " of " + n + " squares before ending the stream"));
            }
        }

        void cancel() {
            cancelled = true;
            ClientCall<Input, Output> current = call;
            if (current != null) {
                current.cancel("the fan-out no longer needs these squares", null);
            }
        }

        private void succeed() {
            finished = true;
            sink.success(squares);
        }

        private void fail(RuntimeException failure) {
            finished = true;
            finishUnanswered();
            // After our own cancel nobody is listening for the error any more.
            if (!cancelled) {
                sink.error(failure);
            }
        }

        private void finishUnanswered() {
            long now = System.nanoTime();
            while (!sendTimes.isEmpty()) {
                recorder.finished(now - sendTimes.poll(), false);
            }
        }

        /** The callbacks of one stream; each stream gets its own requests side. */
        private final class Leg implements ClientResponseObserver<Input, Output> {

            @Override
            public void beforeStart(ClientCallStreamObserver<Input> requests) {
                Exchange.this.requests = requests;
                requests.setOnReadyHandler(Exchange.this::sendWhileReady);
            }

            @Override
            public void onNext(Output output) {
                onAnswer(output);
            }

            @Override
            public void onError(Throwable error) {
                onStreamError(error);
            }

            @Override
            public void onCompleted() {
                onStreamCompleted();
            }
        }
    }
}
