package io.github.squarelab.aggregator.grpc;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.squarelab.payload.Shape;
import io.github.squarelab.proto.Input;
import io.github.squarelab.proto.Output;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ClientInterceptors;
import io.grpc.ForwardingClientCall.SimpleForwardingClientCall;
import io.grpc.ForwardingClientCallListener.SimpleForwardingClientCallListener;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Mono;

/**
 * A fan-out that fails cancels its other calls from whichever thread failed it, and that cancel can arrive while
 * a call is still inside {@code ClientCall.start()}. grpc-java throws from such a cancel (grpc/grpc-java#12964),
 * which once left an aggregator request hanging; every client must hold the cancel until start has returned, and
 * then deliver it.
 */
class CancelDuringStartTests {

    private static final Duration DEADLINE = Duration.ofSeconds(30);

    @Test
    void aUnaryCallCancelledDuringStartIsCancelledOnceStarted() throws Exception {
        assertCancelWaitsForStart(
                channel -> new GrpcUnarySquareClient(channel, "square-test", DEADLINE).square(7, Shape.SMALL));
    }

    @Test
    void aPipelinedStreamCancelledDuringStartIsCancelledOnceStarted() throws Exception {
        assertCancelWaitsForStart(channel -> GrpcStreamSquareClient.pipelined(channel, "square-test", DEADLINE)
                .squares(3, Shape.SMALL, new CountingRecorder()));
    }

    @Test
    void aPingPongStreamCancelledDuringStartIsCancelledOnceStarted() throws Exception {
        assertCancelWaitsForStart(channel -> GrpcStreamSquareClient.pingPong(channel, "square-test", DEADLINE)
                .squares(3, Shape.SMALL, new CountingRecorder()));
    }

    private static void assertCancelWaitsForStart(Function<Channel, Mono<?>> call) throws Exception {
        PausingStart pausing = new PausingStart();
        List<String> signals = new CopyOnWriteArrayList<>();
        try (InProcessSquareServer server = new InProcessSquareServer(new Silent())) {
            Channel channel = ClientInterceptors.intercept(server.channel, pausing);
            Recording subscriber = new Recording(signals);
            // Mono.create hands the subscriber its subscription before it starts the call, so the test can cancel
            // while the subscribing thread is held inside start().
            Thread subscribing = new Thread(() -> call.apply(channel).subscribe(subscriber));
            subscribing.start();
            assertThat(pausing.inStart.await(5, TimeUnit.SECONDS)).isTrue();

            subscriber.dispose();
            assertThat(pausing.events).containsExactly("start");

            pausing.release.countDown();
            subscribing.join(5_000);
            assertThat(pausing.closed.await(5, TimeUnit.SECONDS)).isTrue();
            assertThat(pausing.events).containsExactly("start", "started", "cancel", "closed CANCELLED");
            assertThat(signals)
                    .as("nobody is told the outcome of a cancelled call")
                    .isEmpty();
        }
    }

    /** Holds every call inside start() until released, and records start, cancel and close in order. */
    private static final class PausingStart implements ClientInterceptor {

        final List<String> events = new CopyOnWriteArrayList<>();
        final CountDownLatch inStart = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);
        final CountDownLatch closed = new CountDownLatch(1);

        @Override
        public <Q, A> ClientCall<Q, A> interceptCall(MethodDescriptor<Q, A> method, CallOptions options, Channel next) {
            return new SimpleForwardingClientCall<>(next.newCall(method, options)) {
                @Override
                public void start(Listener<A> listener, Metadata headers) {
                    events.add("start");
                    inStart.countDown();
                    awaitRelease();
                    super.start(
                            new SimpleForwardingClientCallListener<>(listener) {
                                @Override
                                public void onClose(Status status, Metadata trailers) {
                                    events.add("closed " + status.getCode());
                                    closed.countDown();
                                    super.onClose(status, trailers);
                                }
                            },
                            headers);
                    events.add("started");
                }

                @Override
                public void cancel(String message, Throwable cause) {
                    events.add("cancel");
                    super.cancel(message, cause);
                }
            };
        }

        private void awaitRelease() {
            try {
                assertThat(release.await(5, TimeUnit.SECONDS)).isTrue();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }
    }

    /** Records every signal the client's Mono gives after the subscription. */
    private static final class Recording extends BaseSubscriber<Object> {

        private final List<String> signals;

        Recording(List<String> signals) {
            this.signals = signals;
        }

        @Override
        protected void hookOnNext(Object value) {
            signals.add("next " + value);
        }

        @Override
        protected void hookOnComplete() {
            signals.add("complete");
        }

        @Override
        protected void hookOnError(Throwable error) {
            signals.add("error " + error);
        }
    }

    /** Never answers, so the only way a call ends is the client's cancel. */
    private static final class Silent extends InProcessSquareServer.Correct {

        @Override
        public void findSquareUnary(Input request, StreamObserver<Output> answers) {}

        @Override
        public StreamObserver<Input> findSquareBiStream(StreamObserver<Output> answers) {
            return new StreamObserver<>() {
                @Override
                public void onNext(Input input) {}

                @Override
                public void onError(Throwable t) {}

                @Override
                public void onCompleted() {}
            };
        }
    }
}
