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
import io.github.squarelab.stream.PipelinedSending;
import io.github.squarelab.stream.SendTimes;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ClientResponseObserver;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * {@code findSquareBiStream} as the aggregator's GrpcStreamSquareClient calls it, {@code streams} slots of streams of
 * {@code messagesPerStream} messages, sent while grpc-java is ready and the window (1 for ping-pong) allows.
 */
public final class GrpcStreamLoad implements Load {

    private final String name;
    private final ManagedChannel channel;
    private final int slots;
    private final int messagesPerStream;
    /** How many messages a stream may have unanswered: 1 for ping-pong, else only isReady limits it. */
    private final int window;

    private final Duration streamDeadline;
    private final CountDownLatch slotsEnded;
    private volatile boolean stopping;
    private volatile boolean givenUp;
    private MeasuredInterval interval;
    private final Optional<FloorTls> tls;
    private Optional<Negotiated> negotiated = Optional.empty();

    /**
     * @param target the server, as a grpc-java target such as 127.0.0.1:6565
     * @param streams how many streams to keep open at once: one per slot
     * @param messagesPerStream how many numbers each stream sends before it half-closes
     * @param streamDeadline the deadline of each stream, from its opening
     */
    public GrpcStreamLoad(String target, int streams, int messagesPerStream, Duration streamDeadline) {
        this(target, streams, messagesPerStream, streamDeadline, Optional.empty());
    }

    /** @param tls under TLS, the CA to trust and any client certificate; else empty */
    public GrpcStreamLoad(
            String target, int streams, int messagesPerStream, Duration streamDeadline, Optional<FloorTls> tls) {
        this("grpc_stream", target, streams, messagesPerStream, Integer.MAX_VALUE, streamDeadline, tls);
    }

    private GrpcStreamLoad(
            String name,
            String target,
            int streams,
            int messagesPerStream,
            int window,
            Duration streamDeadline,
            Optional<FloorTls> tls) {
        this.name = name;
        this.tls = tls;
        // Ping-pong shares the aggregator's unary channel, which retries; the pipelined stream has its own, which does
        // not.
        this.channel = window == 1
                ? GrpcChannels.withShortCallbacks(target, tls)
                : GrpcChannels.withShortCallbacksAndNoRetry(target, tls);
        this.slots = streams;
        this.messagesPerStream = messagesPerStream;
        this.window = window;
        this.streamDeadline = streamDeadline;
        this.slotsEnded = new CountDownLatch(streams);
    }

    /** grpc_pingpong: the same streams with one message in flight on each, the next sent on its answer. */
    public static GrpcStreamLoad pingPong(String target, int streams, int messagesPerStream, Duration streamDeadline) {
        return pingPong(target, streams, messagesPerStream, streamDeadline, Optional.empty());
    }

    /** grpc_pingpong, under TLS with the tls given. */
    public static GrpcStreamLoad pingPong(
            String target, int streams, int messagesPerStream, Duration streamDeadline, Optional<FloorTls> tls) {
        return new GrpcStreamLoad("grpc_pingpong", target, streams, messagesPerStream, 1, streamDeadline, tls);
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
        negotiated = GrpcChannels.handshake(channel, tls, ClientSettings.FIRST_ANSWER_TIMEOUT, name);
        for (int slot = 0; slot < slots; slot++) {
            openStream();
        }
    }

    /** The streams under way finish; after {@code timeout} shutting the channel down cancels the rest. */
    @Override
    public void stop(Duration timeout) throws InterruptedException {
        stopping = true;
        Load.awaitEnd(
                interval,
                slotsEnded,
                timeout,
                () -> {
                    givenUp = true;
                    channel.shutdownNow();
                },
                name + " streams did not end even when cancelled");
    }

    @Override
    public void close() {
        GrpcChannels.close(channel);
    }

    private void openStream() {
        ClientCalls.asyncBidiStreamingCall(
                channel.newCall(
                        SquareRpcGrpc.getFindSquareBiStreamMethod(),
                        PipelinedSending.callOptions(
                                CallOptions.DEFAULT.withDeadlineAfter(streamDeadline.toNanos(), TimeUnit.NANOSECONDS))),
                new Exchange());
    }

    /** A stream has ended with all its answers checked: its slot goes on unless the run is ending. */
    private void streamCompleted() {
        if (stopping || interval.hasFailed()) {
            slotsEnded.countDown();
        } else {
            openStream();
        }
    }

    /** One stream, from 1 as the aggregator's; grpc-java runs a call's callbacks one at a time, so no lock. */
    private final class Exchange implements ClientResponseObserver<Input, Output> {

        private final SendTimes sendTimes = new SendTimes();
        private ClientCallStreamObserver<Input> requests;
        private int sent;
        private int nextToSend = 1;
        private int answered;
        private int nextExpected = 1;
        /** After our own cancel grpc-java refuses more messages, and the error it reports is ours. */
        private boolean cancelledByUs;

        @Override
        public void beforeStart(ClientCallStreamObserver<Input> requests) {
            this.requests = requests;
            requests.setOnReadyHandler(this::sendWhileReady);
        }

        /** onReady comes again once the transport is ready, and onNext once the window has room. */
        private void sendWhileReady() {
            while (sent < messagesPerStream && sendTimes.size() < window && !cancelledByUs && requests.isReady()) {
                sendTimes.add(System.nanoTime());
                requests.onNext(Input.newBuilder().setNumber(nextToSend).build());
                nextToSend = Squares.next(nextToSend);
                sent++;
                if (sent == messagesPerStream) {
                    requests.onCompleted();
                }
            }
        }

        @Override
        public void onNext(Output output) {
            long square = Squares.square(nextExpected);
            if (sendTimes.isEmpty() || output.getNumber() != nextExpected || output.getResult() != square) {
                String asked = sendTimes.isEmpty() ? "nothing unanswered" : nextExpected + " (" + square + ")";
                interval.fail(name + " answered number " + output.getNumber() + " with " + output.getResult()
                        + " when the next answer due was for " + asked);
                cancelledByUs = true;
                requests.cancel("wrong answer", null);
                return;
            }
            interval.answered(System.nanoTime() - sendTimes.poll());
            answered++;
            nextExpected = Squares.next(nextExpected);
            sendWhileReady();
        }

        /** Ends the slot: a given-up stream counts what it sent unanswered; any other error fails the run. */
        @Override
        public void onError(Throwable error) {
            if (givenUp) {
                interval.unanswered(sendTimes.size());
            } else if (!cancelledByUs) {
                interval.fail(name + " failed after " + answered + " of " + messagesPerStream + " answers: "
                        + Status.fromThrowable(error));
            }
            slotsEnded.countDown();
        }

        @Override
        public void onCompleted() {
            if (answered != messagesPerStream) {
                interval.fail(name + " completed after " + answered + " of " + messagesPerStream + " answers");
                slotsEnded.countDown();
                return;
            }
            streamCompleted();
        }
    }
}
