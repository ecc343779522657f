package io.github.squarelab.floor.grpc;

import io.github.squarelab.stream.SendTimes;
import io.github.squarelab.floor.Squares;
import io.github.squarelab.floor.measure.Load;
import io.github.squarelab.floor.measure.MeasuredInterval;
import io.github.squarelab.proto.Input;
import io.github.squarelab.proto.Output;
import io.github.squarelab.proto.SquareRpcGrpc;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ClientResponseObserver;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * {@code findSquareBiStream} as the aggregator calls it for {@code /grpc/stream/n}, on one channel:
 * {@code streams} slots, each running bidi streams one after another. A stream sends its
 * {@code messagesPerStream} numbers whenever the transport is ready for more (isReady/onReady, as in
 * grpc-java's ManualFlowControlClient and the aggregator), half-closes after the last, checks that each
 * answer is the square of the next number it sent, and ends when the server completes after exactly that
 * many answers; then its slot opens the next stream. The callbacks run on the channel's event loop, as
 * the aggregator's do (see {@link GrpcChannels#withShortCallbacks}).
 *
 * <p>At the end the slots open no more streams and the streams under way finish, every answer checked;
 * what takes longer than the drain timeout is given up (cancelled) and its messages sent but unanswered
 * are counted.
 */
public final class GrpcStreamLoad implements Load {

    private final ManagedChannel channel;
    private final int slots;
    private final int messagesPerStream;
    private final Duration streamDeadline;
    private final CountDownLatch slotsEnded;
    private volatile boolean stopping;
    private volatile boolean givenUp;
    private MeasuredInterval interval;

    /**
     * @param target the server, as a grpc-java target such as 127.0.0.1:6565
     * @param streams how many streams to keep open at once: one per slot
     * @param messagesPerStream how many numbers each stream sends before it half-closes
     * @param streamDeadline the deadline of each stream, from its opening
     */
    public GrpcStreamLoad(String target, int streams, int messagesPerStream, Duration streamDeadline) {
        this.channel = GrpcChannels.withShortCallbacks(target);
        this.slots = streams;
        this.messagesPerStream = messagesPerStream;
        this.streamDeadline = streamDeadline;
        this.slotsEnded = new CountDownLatch(streams);
    }

    public static String io() {
        return GrpcChannels.io();
    }

    @Override
    public void start(MeasuredInterval interval) {
        this.interval = interval;
        for (int slot = 0; slot < slots; slot++) {
            openStream();
        }
    }

    /**
     * The slots see the flag when their stream ends and open no more; the streams under way finish. After
     * {@code timeout} the rest are cancelled, all at once by shutting the channel down, and their
     * unanswered messages counted as they end.
     */
    @Override
    public void stop(Duration timeout) throws InterruptedException {
        stopping = true;
        Load.awaitEnd(interval, slotsEnded, timeout, () -> {
            givenUp = true;
            channel.shutdownNow();
        }, "grpc_stream streams did not end even when cancelled");
    }

    @Override
    public void close() {
        GrpcChannels.close(channel);
    }

    private void openStream() {
        ClientCalls.asyncBidiStreamingCall(channel.newCall(SquareRpcGrpc.getFindSquareBiStreamMethod(),
            CallOptions.DEFAULT.withDeadlineAfter(streamDeadline.toNanos(), TimeUnit.NANOSECONDS)),
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

    /**
     * One stream: the numbers 1, 2, ... (cycling through the numbers the clients ask for, so 1..n for
     * n up to {@value Squares#LARGEST_NUMBER}, as the aggregator sends). grpc-java runs the callbacks of one
     * call one at a time, with a happens-before edge from each to the next, so the plain fields need no
     * lock.
     */
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

        /**
         * Sending stops only when the transport is not ready, and then onReady comes again once it is, so
         * every stream sends all its messages; it half-closes right after the last, and later onReady
         * calls find nothing to do.
         */
        private void sendWhileReady() {
            while (sent < messagesPerStream && !cancelledByUs && requests.isReady()) {
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
                interval.fail("grpc_stream answered number " + output.getNumber() + " with " + output.getResult()
                    + " when the next answer due was for " + asked);
                cancelledByUs = true;
                requests.cancel("wrong answer", null);
                return;
            }
            interval.answered(System.nanoTime() - sendTimes.poll());
            answered++;
            nextExpected = Squares.next(nextExpected);
        }

        /** Ends the slot: a given-up stream counts what it sent unanswered; any other error fails the run. */
        @Override
        public void onError(Throwable error) {
            if (givenUp) {
                interval.unanswered(sendTimes.size());
            } else if (!cancelledByUs) {
                interval.fail("grpc_stream failed after " + answered + " of " + messagesPerStream + " answers: "
                    + Status.fromThrowable(error));
            }
            slotsEnded.countDown();
        }

        @Override
        public void onCompleted() {
            if (answered != messagesPerStream) {
                interval.fail("grpc_stream completed after " + answered + " of " + messagesPerStream + " answers");
                slotsEnded.countDown();
                return;
            }
            streamCompleted();
        }
    }
}
