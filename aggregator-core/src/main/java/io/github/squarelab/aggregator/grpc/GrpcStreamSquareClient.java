package io.github.squarelab.aggregator.grpc;

import io.github.squarelab.aggregator.fanout.CallRecorder;
import io.github.squarelab.aggregator.fanout.Squares;
import io.github.squarelab.aggregator.fanout.StreamSquareClient;
import io.github.squarelab.aggregator.fanout.Transport;
import io.github.squarelab.payload.Shape;
import io.github.squarelab.proto.Input;
import io.github.squarelab.proto.Output;
import io.github.squarelab.proto.SquareRpcGrpc;
import io.github.squarelab.stream.PipelinedSending;
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
import java.util.concurrent.atomic.AtomicBoolean;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;

/**
 * {@code findSquareBiStream}: 1..n as n messages with the shape's payload, sent while grpc-java is ready and the
 * {@code window} of unanswered messages has room (1 for ping-pong, no count when pipelined), answers and echoes checked
 * in order; one failover to a new stream, within the request's deadline, if the replica goes away.
 */
public final class GrpcStreamSquareClient implements StreamSquareClient {

    private static final int PING_PONG = 1;
    private static final int PIPELINED = Integer.MAX_VALUE;

    private final Transport transport;
    private final int window;
    private final Channel channel;
    private final String target;
    private final Duration deadline;
    private final boolean plaintext;
    /** Whether any stream has had an answer: a plaintext channel to a TLS port never gets one. */
    private final AtomicBoolean answered = new AtomicBoolean();

    private GrpcStreamSquareClient(
            Transport transport, int window, Channel channel, String target, Duration deadline, boolean plaintext) {
        this.transport = transport;
        this.window = window;
        this.channel = channel;
        this.target = target;
        this.deadline = deadline;
        this.plaintext = plaintext;
    }

    /** grpc_stream: sends while the transport is ready, which {@link PipelinedSending} bounds in bytes. */
    public static GrpcStreamSquareClient pipelined(Channel channel, String target, Duration deadline) {
        return pipelined(channel, target, deadline, false);
    }

    /** @param plaintext the channel speaks plaintext: a failure before any answer then says what a TLS port needs */
    public static GrpcStreamSquareClient pipelined(
            Channel channel, String target, Duration deadline, boolean plaintext) {
        return new GrpcStreamSquareClient(Transport.GRPC_STREAM, PIPELINED, channel, target, deadline, plaintext);
    }

    /** grpc_pingpong: one message in flight, the next sent on the answer to the one before. */
    public static GrpcStreamSquareClient pingPong(Channel channel, String target, Duration deadline) {
        return pingPong(channel, target, deadline, false);
    }

    /** @param plaintext as for {@link #pipelined(Channel, String, Duration, boolean)} */
    public static GrpcStreamSquareClient pingPong(
            Channel channel, String target, Duration deadline, boolean plaintext) {
        return new GrpcStreamSquareClient(Transport.GRPC_PINGPONG, PING_PONG, channel, target, deadline, plaintext);
    }

    @Override
    public Transport transport() {
        return transport;
    }

    @Override
    public Mono<Squares> squares(int n, Shape shape, CallRecorder recorder) {
        return Mono.create(sink -> {
            Exchange exchange = new Exchange(n, shape, recorder, sink);
            sink.onCancel(exchange::cancel);
            exchange.open();
        });
    }

    /**
     * One request's squares on a stream, or after a failover on two. grpc-java runs the callbacks of one call one at
     * a time, and the new stream is opened from the last callback of the one before, so the plain fields need no
     * lock; only {@code cancel} is touched from outside.
     */
    private final class Exchange {

        private final int n;
        private final Shape shape;
        private final CallRecorder recorder;
        private final MonoSink<Squares> sink;
        private final Squares squares;
        /** One deadline for the first stream and its replacement. */
        private final Deadline streamDeadline;
        /** When each unanswered message left, oldest first; an echo is checked against the shape, not kept. */
        private final SendTimes sendTimes = new SendTimes();

        private final CancelOnceStarted cancel = new CancelOnceStarted("the fan-out no longer needs these squares");

        /** The sending side of the current stream. */
        private ClientCallStreamObserver<Input> requests;

        private int nextNumber;
        private boolean halfClosed;
        /** The sink has been told the outcome; later callbacks are ignored. */
        private boolean finished;
        /** The one new stream after a failover has been opened. */
        private boolean resumed;

        Exchange(int n, Shape shape, CallRecorder recorder, MonoSink<Squares> sink) {
            this.n = n;
            this.shape = shape;
            this.recorder = recorder;
            this.sink = sink;
            this.squares = new Squares(n);
            this.streamDeadline = Deadline.after(deadline.toNanos(), TimeUnit.NANOSECONDS);
        }

        /** Opens a stream from the first number not yet answered; the cancel that came before it reaches it too. */
        void open() {
            ClientCall<Input, Output> call = channel.newCall(
                    SquareRpcGrpc.getFindSquareBiStreamMethod(),
                    PipelinedSending.callOptions(CallOptions.DEFAULT.withDeadline(streamDeadline)));
            nextNumber = squares.size() + 1;
            halfClosed = false;
            ClientCalls.asyncBidiStreamingCall(call, new Leg());
            cancel.started(call);
        }

        /** The fan-out no longer needs the squares: the stream is cancelled, and nobody is told the outcome. */
        void cancel() {
            cancel.cancel();
        }

        /** Sends from onReady and from each answer, so that a stream's messages run in its own callbacks only. */
        private void send() {
            while (!finished && nextNumber <= n && sendTimes.size() < window && requests.isReady()) {
                sendTimes.add(System.nanoTime());
                recorder.started();
                requests.onNext(GrpcPayloads.input(nextNumber++, shape));
            }
            // Ping-pong ends its stream on the last answer, the pipelined stream after its last message.
            boolean done = window == PING_PONG ? squares.isComplete() : nextNumber > n;
            if (done && !halfClosed && !finished) {
                halfClosed = true;
                requests.onCompleted();
            }
        }

        private void onAnswer(Output output) {
            answered.set(true);
            String wrong = wrongAnswer(output);
            if (wrong != null) {
                fail(GrpcFailures.badAnswer(target, wrong));
                requests.cancel("wrong answer from the square service", null);
                return;
            }
            squares.add(output.getResult());
            recorder.finished(System.nanoTime() - sendTimes.poll(), true);
            send();
        }

        /** What is wrong with an answer, or null when it answers the oldest number unanswered. */
        private String wrongAnswer(Output output) {
            int number = output.getNumber();
            int expected = squares.size() + 1;
            boolean awaited = !sendTimes.isEmpty();
            if (squares.isComplete()) {
                return "more than " + n + " answers";
            }
            // Ping-pong says what was in flight, or that nothing was; the pipelined stream which number was next.
            if (window == PING_PONG) {
                if (!awaited) {
                    return "number " + number + " before it was sent";
                }
                if (number != expected) {
                    return "number " + number + " where " + expected + " was in flight";
                }
            } else if (number != expected) {
                return "number " + number + " where " + expected + " was next";
            } else if (!awaited) {
                // Polling an empty SendTimes would corrupt it.
                return "number " + expected + " before it was sent";
            }
            return GrpcPayloads.wrongEcho(expected, shape, output);
        }

        private void onStreamError(Throwable error) {
            if (finished) {
                return;
            }
            if (squares.isComplete()) {
                // Every answer arrived before the replica went away; only the stream's end was lost.
                succeed();
            } else if (!resumed && !cancel.isCancelled() && replicaWentAway(error)) {
                // The messages unanswered on the failed stream are finished as failed, and sent again.
                resumed = true;
                finishUnanswered();
                open();
            } else {
                fail(GrpcFailures.translate(
                        error, target, deadline, "aggregator.deadline", plaintext && !answered.get()));
            }
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

        /** Every message sent and not answered is finished with the recorder, once. */
        private void finishUnanswered() {
            long now = System.nanoTime();
            while (!sendTimes.isEmpty()) {
                recorder.finished(now - sendTimes.poll(), false);
            }
        }

        /** The callbacks of one stream; each stream gets its own sending side. */
        private final class Leg implements ClientResponseObserver<Input, Output> {

            @Override
            public void beforeStart(ClientCallStreamObserver<Input> requests) {
                Exchange.this.requests = requests;
                requests.setOnReadyHandler(Exchange.this::send);
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

    /** UNAVAILABLE: the connection broke; CANCELLED, not by us: a replica shutting down cuts its streams. */
    private static boolean replicaWentAway(Throwable error) {
        Status.Code code = GrpcFailures.code(error);
        return code == Status.Code.UNAVAILABLE || code == Status.Code.CANCELLED;
    }
}
