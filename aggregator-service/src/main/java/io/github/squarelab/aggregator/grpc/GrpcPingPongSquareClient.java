package io.github.squarelab.aggregator.grpc;

import io.github.squarelab.aggregator.fanout.CallRecorder;
import io.github.squarelab.aggregator.fanout.Squares;
import io.github.squarelab.aggregator.fanout.StreamSquareClient;
import io.github.squarelab.aggregator.fanout.Transport;
import io.github.squarelab.proto.Input;
import io.github.squarelab.proto.Output;
import io.github.squarelab.proto.SquareRpcGrpc;
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
 * {@code vinsmath.SquareRpc/findSquareBiStream} used one message at a time: the number k+1 is sent only
 * once the square of k has arrived. One stream per request, with the request's deadline; if its replica
 * goes away mid-stream, one new stream carries on from the first number not answered.
 */
public class GrpcPingPongSquareClient implements StreamSquareClient {

    private final Channel channel;
    private final String target;
    private final Duration deadline;

    /** @param channel a Channel rather than a ManagedChannel, so that tests can hand in an in-process one */
    public GrpcPingPongSquareClient(Channel channel, String target, Duration deadline) {
        this.channel = channel;
        this.target = target;
        this.deadline = deadline;
    }

    @Override
    public Transport transport() {
        return Transport.GRPC_PINGPONG;
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
     * One request's squares. With one message in flight there is never more than one to buffer, so no
     * isReady pacing is needed beyond the first message. grpc-java runs one call's callbacks one at a time, and each send follows
     * the answer before it, so the plain fields need no lock; {@code cancelled} and {@code call} are
     * touched from outside, hence volatile.
     */
    private final class Exchange implements ClientResponseObserver<Input, Output> {

        private final int n;
        private final CallRecorder recorder;
        private final MonoSink<Squares> sink;
        private final Deadline streamDeadline;
        private final Squares squares;
        private volatile ClientCall<Input, Output> call;
        private ClientCallStreamObserver<Input> requests;
        /** When the message now in flight was sent; 0 when none is. */
        private long sentAt;

        /** The current stream has not sent its first message yet. */
        private boolean awaitingFirst;

        private boolean resumed;
        private boolean finished;
        private volatile boolean cancelled;

        Exchange(int n, CallRecorder recorder, MonoSink<Squares> sink, Deadline streamDeadline) {
            this.n = n;
            this.recorder = recorder;
            this.sink = sink;
            this.streamDeadline = streamDeadline;
            this.squares = new Squares(n);
        }

        /**
         * Opens a stream; its first message, the first number not yet answered, leaves from the stream's
         * first onReady, so that it runs in the stream's own callbacks and never races an early onError.
         */
        void open() {
            ClientCall<Input, Output> next = channel.newCall(
                    SquareRpcGrpc.getFindSquareBiStreamMethod(), CallOptions.DEFAULT.withDeadline(streamDeadline));
            call = next;
            awaitingFirst = true;
            ClientCalls.asyncBidiStreamingCall(next, this);
            if (cancelled) {
                next.cancel("the fan-out no longer needs these squares", null);
            }
        }

        private void sendFirst() {
            if (awaitingFirst && !finished) {
                awaitingFirst = false;
                sendNext();
            }
        }

        private void sendNext() {
            sentAt = System.nanoTime();
            recorder.started();
            requests.onNext(Input.newBuilder().setNumber(squares.size() + 1).build());
        }

        @Override
        public void beforeStart(ClientCallStreamObserver<Input> requests) {
            this.requests = requests;
            requests.setOnReadyHandler(this::sendFirst);
        }

        @Override
        public void onNext(Output output) {
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
            recorder.finished(System.nanoTime() - sentAt, true);
            sentAt = 0;
            if (squares.isComplete()) {
                requests.onCompleted();
            } else {
                sendNext();
            }
        }

        /** What is wrong with an answer, or null when it answers the number in flight. */
        private String wrongAnswer(Output output) {
            int expected = squares.size() + 1;
            if (sentAt == 0) {
                return squares.isComplete()
                        ? "more than " + n + " answers"
                        : "number " + output.getNumber() + " before it was sent";
            }
            if (output.getNumber() != expected) {
                return "number " + output.getNumber() + " where " + expected + " was in flight";
            }
            return null;
        }

        @Override
        public void onError(Throwable error) {
            if (finished) {
                return;
            }
            if (squares.isComplete()) {
                // Every answer arrived before the replica went away; only the stream's end was lost.
                succeed();
            } else if (!resumed && !cancelled && replicaWentAway(error)) {
                resumed = true;
                finishInFlight();
                open();
            } else {
                fail(GrpcFailures.translate(error, target, deadline, "aggregator.deadline"));
            }
        }

        /** UNAVAILABLE: the connection broke; CANCELLED, not by us: a replica shutting down cuts its streams. */
        private boolean replicaWentAway(Throwable error) {
            Status.Code code = Status.fromThrowable(error).getCode();
            return code == Status.Code.UNAVAILABLE || code == Status.Code.CANCELLED;
        }

        @Override
        public void onCompleted() {
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
            finishInFlight();
            // After our own cancel nobody is listening for the error any more.
            if (!cancelled) {
                sink.error(failure);
            }
        }

        private void finishInFlight() {
            if (sentAt != 0) {
                recorder.finished(System.nanoTime() - sentAt, false);
                sentAt = 0;
            }
        }
    }
}
