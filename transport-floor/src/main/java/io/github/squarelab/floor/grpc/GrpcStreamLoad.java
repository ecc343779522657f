package io.github.squarelab.floor.grpc;

import io.github.squarelab.stream.SendTimes;
import io.github.squarelab.floor.Squares;
import io.github.squarelab.floor.measure.Load;
import io.github.squarelab.floor.measure.Window;
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
 * {@code findSquareBiStream}: {@code streams} concurrent bidi streams on one channel, each sending for as
 * long as the load runs, whenever the transport is ready for more (isReady/onReady, as in grpc-java's
 * ManualFlowControlClient), and checking that each answer is the square of the next number it sent.
 *
 * <p>isReady bounds only what waits in the client; the server reads one message at a time, so each stream
 * also has up to its HTTP/2 flow-control window of messages (tens of thousands of these small ones) queued
 * in the server. At the end every stream half-closes and its backlog is answered and checked; what takes
 * longer than the drain timeout is given up (cancelled) and counted.
 */
public final class GrpcStreamLoad implements Load {

    private final ManagedChannel channel;
    private final int streams;
    private final Duration streamDeadline;
    private final CountDownLatch streamsEnded;
    private volatile boolean stopping;
    private volatile boolean givenUp;
    private Window window;

    /**
     * @param target the server, as a grpc-java target such as 127.0.0.1:6565
     * @param streams how many streams to keep open
     * @param streamDeadline the deadline of each stream, which lasts the whole run
     */
    public GrpcStreamLoad(String target, int streams, Duration streamDeadline) {
        this.channel = GrpcChannels.withLongCallbacks(target);
        this.streams = streams;
        this.streamDeadline = streamDeadline;
        this.streamsEnded = new CountDownLatch(streams);
    }

    public static String io() {
        return GrpcChannels.io();
    }

    @Override
    public void start(Window window) {
        this.window = window;
        for (int stream = 0; stream < streams; stream++) {
            ClientCalls.asyncBidiStreamingCall(channel.newCall(SquareRpcGrpc.getFindSquareBiStreamMethod(),
                CallOptions.DEFAULT.withDeadlineAfter(streamDeadline.toNanos(), TimeUnit.NANOSECONDS)),
                new Exchange(Squares.first(stream)));
        }
    }

    /**
     * The streams see the flag at their next onReady, half-close, and complete once their backlog is
     * answered; after {@code timeout} the rest are cancelled, all at once by shutting the channel down,
     * and their unanswered messages counted as they end.
     */
    @Override
    public void stop(Duration timeout) throws InterruptedException {
        stopping = true;
        if (!streamsEnded.await(timeout.toNanos(), TimeUnit.NANOSECONDS)) {
            givenUp = true;
            channel.shutdownNow();
            if (!streamsEnded.await(GrpcChannels.GIVE_UP_GRACE.toNanos(), TimeUnit.NANOSECONDS)) {
                window.fail(streamsEnded.getCount() + " grpc-stream streams did not end even when cancelled");
            }
        }
    }

    @Override
    public void close() {
        GrpcChannels.close(channel);
    }

    /**
     * One stream. grpc-java runs the callbacks of one call one at a time (on its default executor here),
     * with a happens-before edge from each to the next, so the plain fields need no lock.
     */
    private final class Exchange implements ClientResponseObserver<Input, Output> {

        private final SendTimes sendTimes = new SendTimes();
        private ClientCallStreamObserver<Input> requests;
        private int nextToSend;
        private int nextExpected;
        private boolean halfClosed;
        private boolean cancelledByUs;

        Exchange(int first) {
            this.nextToSend = first;
            this.nextExpected = first;
        }

        @Override
        public void beforeStart(ClientCallStreamObserver<Input> requests) {
            this.requests = requests;
            requests.setOnReadyHandler(this::sendWhileReady);
        }

        /**
         * Sending stops only when the transport is not ready, and then onReady comes again once it is, so a
         * stream never misses the stop flag.
         */
        private void sendWhileReady() {
            boolean done = stopping || window.hasFailed();
            while (!done && requests.isReady()) {
                sendTimes.add(System.nanoTime());
                requests.onNext(Input.newBuilder().setNumber(nextToSend).build());
                nextToSend = Squares.next(nextToSend);
                done = stopping || window.hasFailed();
            }
            if (done && !halfClosed && !cancelledByUs) {
                halfClosed = true;
                requests.onCompleted();
            }
        }

        @Override
        public void onNext(Output output) {
            long square = Squares.square(nextExpected);
            if (sendTimes.isEmpty() || output.getNumber() != nextExpected || output.getResult() != square) {
                String asked = sendTimes.isEmpty() ? "nothing unanswered" : nextExpected + " (" + square + ")";
                window.fail("grpc-stream answered number " + output.getNumber() + " with " + output.getResult()
                    + " when the next answer due was for " + asked);
                cancelledByUs = true;
                requests.cancel("wrong answer", null);
                return;
            }
            window.answered(System.nanoTime() - sendTimes.poll());
            nextExpected = Squares.next(nextExpected);
        }

        @Override
        public void onError(Throwable error) {
            if (givenUp) {
                window.unanswered(sendTimes.size());
            } else if (!cancelledByUs) {
                window.fail("grpc-stream failed: " + Status.fromThrowable(error));
            }
            streamsEnded.countDown();
        }

        @Override
        public void onCompleted() {
            if (!sendTimes.isEmpty()) {
                window.fail("grpc-stream completed with " + sendTimes.size() + " messages unanswered");
            }
            streamsEnded.countDown();
        }
    }
}
