package io.github.squarelab.aggregator.grpc;

import io.github.squarelab.aggregator.fanout.CallRecorder;
import io.github.squarelab.aggregator.fanout.Squares;
import io.github.squarelab.proto.Input;
import io.github.squarelab.proto.Output;
import io.github.squarelab.proto.SquareRpcGrpc;
import io.github.squarelab.stream.PipelinedSending;
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
import reactor.core.publisher.MonoSink;

/**
 * One request's squares on a bidi stream, or after a failover on two: what the pipelined
 * ({@link GrpcStreamSquareClient}) and the ping-pong ({@link GrpcPingPongSquareClient}) clients share. It opens
 * the stream with the request's deadline, ends the request when the stream ends, fails or is cancelled, and
 * resumes once on a new stream when the replica went away. A subclass says only what differs: when it sends
 * ({@link #onReady}), how it checks an answer ({@link #onAnswer}), what it remembers of the messages in flight
 * ({@link #finishUnanswered}) and where a new stream starts ({@link #prepareStream}).
 *
 * <p>Why one class: these end-of-stream rules (an error after every answer is a success, one failover on
 * UNAVAILABLE or CANCELLED, no error reported after our own cancel, every message sent finished exactly once)
 * must be the same for both ways of using the stream, and two copies would drift apart.
 *
 * <p>grpc-java runs the callbacks of one call one at a time, and a new stream is opened from the last callback
 * of the one before, so the plain fields need no lock; only {@code cancel} is touched from outside.
 */
abstract class StreamExchange {

    private final Channel channel;
    private final String target;
    private final Duration deadline;
    private final Deadline streamDeadline;
    private final MonoSink<Squares> sink;

    final int n;
    final CallRecorder recorder;
    final Squares squares;
    /** The sending side of the current stream. */
    ClientCallStreamObserver<Input> requests;
    /** The sink has been told the outcome; later callbacks are ignored. */
    boolean finished;

    /** The one new stream after a failover has been opened. */
    private boolean resumed;

    /** Our own cancel, delivered to the current stream once it has started. */
    private final CancelOnceStarted cancel = new CancelOnceStarted("the fan-out no longer needs these squares");

    /** @param deadline the whole request's, from now; one deadline for the first stream and its replacement */
    StreamExchange(
            Channel channel, String target, Duration deadline, int n, CallRecorder recorder, MonoSink<Squares> sink) {
        this.channel = channel;
        this.target = target;
        this.deadline = deadline;
        this.streamDeadline = Deadline.after(deadline.toNanos(), TimeUnit.NANOSECONDS);
        this.n = n;
        this.recorder = recorder;
        this.sink = sink;
        this.squares = new Squares(n);
    }

    /** Sets up a new stream, before it is opened: the first number it is to send is the first not yet answered. */
    abstract void prepareStream();

    /** The current stream is ready for more (grpc-java's onReady). */
    abstract void onReady();

    /** An answer on the current stream, while the outcome is still open. */
    abstract void onAnswer(Output output);

    /** Tells the recorder of every message sent and not answered that it ended unanswered. */
    abstract void finishUnanswered();

    /** Opens a stream; the cancel that came before it, if any, reaches it too. */
    final void open() {
        ClientCall<Input, Output> next = channel.newCall(
                SquareRpcGrpc.getFindSquareBiStreamMethod(),
                PipelinedSending.callOptions(CallOptions.DEFAULT.withDeadline(streamDeadline)));
        prepareStream();
        ClientCalls.asyncBidiStreamingCall(next, new Leg());
        cancel.started(next);
    }

    /** The fan-out no longer needs the squares: the stream is cancelled, and nobody is told the outcome. */
    final void cancel() {
        cancel.cancel();
    }

    /** An answer was wrong: the request fails with a bad answer that says what, and the stream is cancelled. */
    final void rejectAnswer(String what) {
        fail(GrpcFailures.badAnswer(target, what));
        requests.cancel("wrong answer from the square service", null);
    }

    private void onStreamError(Throwable error) {
        if (finished) {
            return;
        }
        if (squares.isComplete()) {
            // Every answer arrived before the replica went away; only the stream's end was lost.
            succeed();
        } else if (!resumed && !cancel.isCancelled() && replicaWentAway(error)) {
            // The messages sent on the failed stream and not answered are finished as failed, and sent again.
            resumed = true;
            finishUnanswered();
            open();
        } else {
            fail(GrpcFailures.translate(error, target, deadline, "aggregator.deadline"));
        }
    }

    /** UNAVAILABLE: the connection broke; CANCELLED, not by us: a replica shutting down cuts its streams. */
    private static boolean replicaWentAway(Throwable error) {
        Status.Code code = GrpcFailures.code(error);
        return code == Status.Code.UNAVAILABLE || code == Status.Code.CANCELLED;
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

    private void succeed() {
        finished = true;
        sink.success(squares);
    }

    private void fail(RuntimeException failure) {
        finished = true;
        finishUnanswered();
        // After our own cancel nobody is listening for the error any more.
        if (!cancel.isCancelled()) {
            sink.error(failure);
        }
    }

    /** The callbacks of one stream; each stream gets its own sending side. */
    private final class Leg implements ClientResponseObserver<Input, Output> {

        @Override
        public void beforeStart(ClientCallStreamObserver<Input> requests) {
            StreamExchange.this.requests = requests;
            requests.setOnReadyHandler(StreamExchange.this::onReady);
        }

        @Override
        public void onNext(Output output) {
            if (!finished) {
                onAnswer(output);
            }
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
