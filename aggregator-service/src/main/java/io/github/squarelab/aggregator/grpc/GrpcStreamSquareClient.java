package io.github.squarelab.aggregator.grpc;

import io.github.squarelab.aggregator.fanout.CallRecorder;
import io.github.squarelab.aggregator.fanout.Squares;
import io.github.squarelab.aggregator.fanout.StreamSquareClient;
import io.github.squarelab.aggregator.fanout.Transport;
import io.github.squarelab.payload.Shape;
import io.github.squarelab.proto.Output;
import io.github.squarelab.stream.SendTimes;
import io.grpc.Channel;
import java.time.Duration;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;

/**
 * {@code vinsmath.SquareRpc/findSquareBiStream}: the numbers 1..n as n messages on one stream, each carrying the
 * payload of the request's shape, and their squares collected in order, each answer's echo checked. The stream as a whole has the request's deadline. If the stream fails
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
    public Mono<Squares> squares(int n, Shape shape, CallRecorder recorder) {
        return Mono.create(sink -> {
            Exchange exchange = new Exchange(n, shape, recorder, sink);
            sink.onCancel(exchange::cancel);
            exchange.open();
        });
    }

    /**
     * Pipelined: sends only while the transport is ready for more (grpc-java's isReady/onReady back-pressure,
     * as in its ManualFlowControlClient), so nothing queues up in memory when the server reads slower than we
     * write, and remembers when each unanswered message left (but not what it carried: an echo is checked against
     * the shape's values for its number, so the payloads in flight take no memory here).
     */
    private final class Exchange extends StreamExchange {

        private final Shape shape;
        private final SendTimes sendTimes = new SendTimes();
        private int nextNumber;
        /** Every number sent and the sending side closed, on the current stream. */
        private boolean halfClosed;

        Exchange(int n, Shape shape, CallRecorder recorder, MonoSink<Squares> sink) {
            super(channel, target, deadline, n, recorder, sink);
            this.shape = shape;
        }

        @Override
        void prepareStream() {
            nextNumber = squares.size() + 1;
            halfClosed = false;
        }

        @Override
        void onReady() {
            while (nextNumber <= n && requests.isReady() && !finished) {
                sendTimes.add(System.nanoTime());
                recorder.started();
                requests.onNext(GrpcPayloads.input(nextNumber++, shape));
            }
            if (nextNumber > n && !halfClosed && !finished) {
                halfClosed = true;
                requests.onCompleted();
            }
        }

        @Override
        void onAnswer(Output output) {
            String wrong = wrongAnswer(output);
            if (wrong != null) {
                rejectAnswer(wrong);
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
            return GrpcPayloads.wrongEcho(expected, shape, output);
        }

        @Override
        void finishUnanswered() {
            long now = System.nanoTime();
            while (!sendTimes.isEmpty()) {
                recorder.finished(now - sendTimes.poll(), false);
            }
        }
    }
}
