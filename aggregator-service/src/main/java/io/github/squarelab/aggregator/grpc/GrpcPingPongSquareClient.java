package io.github.squarelab.aggregator.grpc;

import io.github.squarelab.aggregator.fanout.CallRecorder;
import io.github.squarelab.aggregator.fanout.Squares;
import io.github.squarelab.aggregator.fanout.StreamSquareClient;
import io.github.squarelab.aggregator.fanout.Transport;
import io.github.squarelab.payload.Shape;
import io.github.squarelab.proto.Output;
import io.grpc.Channel;
import java.time.Duration;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;

/**
 * {@code vinsmath.SquareRpc/findSquareBiStream} used one message at a time: the number k+1 is sent only
 * once the square of k has arrived. Each message carries the payload of the request's shape, and each answer's echo
 * is checked. One stream per request, with the request's deadline; if its replica
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
    public Mono<Squares> squares(int n, Shape shape, CallRecorder recorder) {
        return Mono.create(sink -> {
            Exchange exchange = new Exchange(n, shape, recorder, sink);
            sink.onCancel(exchange::cancel);
            exchange.open();
        });
    }

    /**
     * One message in flight: the next leaves from the answer to the one before. With one message in flight
     * there is never more than one to buffer, so no isReady pacing is needed beyond the first message.
     */
    private final class Exchange extends StreamExchange {

        private final Shape shape;

        /** When the message now in flight was sent; 0 when none is. */
        private long sentAt;

        /** The current stream has not sent its first message yet. */
        private boolean awaitingFirst;

        Exchange(int n, Shape shape, CallRecorder recorder, MonoSink<Squares> sink) {
            super(channel, target, deadline, n, recorder, sink);
            this.shape = shape;
        }

        /**
         * A stream's first message, the first number not yet answered, leaves from the stream's first onReady,
         * so that it runs in the stream's own callbacks and never races an early onError.
         */
        @Override
        void prepareStream() {
            awaitingFirst = true;
        }

        @Override
        void onReady() {
            if (awaitingFirst && !finished) {
                awaitingFirst = false;
                sendNext();
            }
        }

        private void sendNext() {
            sentAt = System.nanoTime();
            recorder.started();
            requests.onNext(GrpcPayloads.input(squares.size() + 1, shape));
        }

        @Override
        void onAnswer(Output output) {
            String wrong = wrongAnswer(output);
            if (wrong != null) {
                rejectAnswer(wrong);
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
            return GrpcPayloads.wrongEcho(expected, shape, output);
        }

        @Override
        void finishUnanswered() {
            if (sentAt != 0) {
                recorder.finished(System.nanoTime() - sentAt, false);
                sentAt = 0;
            }
        }
    }
}
