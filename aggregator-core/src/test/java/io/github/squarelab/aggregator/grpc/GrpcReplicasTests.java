package io.github.squarelab.aggregator.grpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.squarelab.aggregator.AggregatorProperties;
import io.github.squarelab.aggregator.fanout.DownstreamException;
import io.github.squarelab.aggregator.fanout.DownstreamException.Kind;
import io.github.squarelab.aggregator.fanout.Squares;
import io.github.squarelab.aggregator.netty.ClientEventLoops;
import io.github.squarelab.aggregator.tls.ClientTls;
import io.github.squarelab.payload.Shape;
import io.github.squarelab.proto.Input;
import io.github.squarelab.proto.Output;
import io.github.squarelab.proto.SquareRpcGrpc;
import io.grpc.Grpc;
import io.grpc.InsecureServerCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

/**
 * The aggregator's channel as configured, with a comma-separated target, in front of two real gRPC servers
 * on loopback ports: calls spread over both, fail over once, and a stream resumes on the other replica.
 */
class GrpcReplicasTests {

    private static final Duration DEADLINE = Duration.ofSeconds(10);

    private final List<Server> servers = new ArrayList<>();
    private final ClientEventLoops loops = new ClientEventLoops("test-client");
    private ManagedChannel channel;

    @AfterEach
    void stop() throws InterruptedException {
        if (channel != null) {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
        loops.close();
        for (Server server : servers) {
            server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    @Test
    void unaryCallsAreSpreadOverEveryReplica() throws Exception {
        Replica a = new Replica();
        Replica b = new Replica();
        GrpcUnarySquareClient client = new GrpcUnarySquareClient(channelTo(a, b), "a,b", DEADLINE);
        awaitBothInUse(client, a, b);
        a.calls.set(0);
        b.calls.set(0);

        for (int i = 1; i <= 20; i++) {
            assertThat(client.square(i, Shape.SMALL).block()).isEqualTo((long) i * i);
        }

        assertThat(a.calls).hasValue(10);
        assertThat(b.calls).hasValue(10);
    }

    @Test
    void aUnaryCallThatIsUnavailableIsRetriedOnceOnTheOtherReplica() throws Exception {
        Replica unavailable = new Replica(number -> -1L);
        Replica healthy = new Replica();
        GrpcUnarySquareClient client = new GrpcUnarySquareClient(channelTo(unavailable, healthy), "a,b", DEADLINE);
        awaitBothInUse(client, unavailable, healthy);
        unavailable.calls.set(0);
        healthy.calls.set(0);

        for (int i = 1; i <= 10; i++) {
            assertThat(client.square(i, Shape.SMALL).block()).isEqualTo((long) i * i);
        }

        assertThat(unavailable.calls.get())
                .as("calls round_robin sent to the failing replica, each retried")
                .isPositive();
        assertThat(healthy.calls)
                .as("every call answered by the healthy replica, once")
                .hasValue(10);
    }

    @Test
    void aUnaryCallThatTimesOutIsNotRetried() throws Exception {
        Replica silentA = new Replica(number -> null);
        Replica silentB = new Replica(number -> null);
        GrpcUnarySquareClient impatient =
                new GrpcUnarySquareClient(channelTo(silentA, silentB), "a,b", Duration.ofMillis(300));

        assertThatThrownBy(() -> impatient.square(7, Shape.SMALL).block(Duration.ofSeconds(5)))
                .isInstanceOf(DownstreamException.class)
                .satisfies(e -> assertThat(((DownstreamException) e).kind()).isEqualTo(Kind.TIMEOUT));
        Thread.sleep(300);
        assertThat(silentA.calls.get() + silentB.calls.get()).isEqualTo(1);
    }

    @Test
    void aStreamWhoseReplicaDiesMidStreamResumesOnTheOtherWithEverySquareInOrder() throws Exception {
        AtomicBoolean firstStream = new AtomicBoolean(true);
        Replica a = new Replica();
        Replica b = new Replica();
        a.dieAfter = b.dieAfter = answers -> firstStream.getAndSet(false) ? 300 : Integer.MAX_VALUE;
        GrpcStreamSquareClient client = GrpcStreamSquareClient.pipelined(channelTo(a, b), "a,b", DEADLINE);
        CountingRecorder recorder = new CountingRecorder();

        Squares squares = client.squares(5000, Shape.SMALL, recorder).block(Duration.ofSeconds(30));

        assertThat(squares.toJson())
                .isEqualTo(IntStream.rangeClosed(1, 5000)
                        .mapToObj(i -> "{\"" + i + "\":" + (long) i * i + "}")
                        .collect(Collectors.joining(",", "[", "]")));
        assertThat(a.died || b.died).as("one replica died mid-stream").isTrue();
        assertThat(recorder.answered).hasValue(5000);
        assertThat(recorder.answered.get() + recorder.unanswered.get()).isEqualTo(recorder.started.get());
    }

    @Test
    void aTargetListWithSomethingElseThanHostAndPortIsRefused() {
        assertThatThrownBy(() -> GrpcClientConfiguration.Target.of(
                        "127.0.0.1:6565, dns:///squares", ClientTls.plaintext().grpcCredentials()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("'dns:///squares' in aggregator.grpc.target is not host:port");
    }

    private ManagedChannel channelTo(Replica a, Replica b) throws IOException {
        String target = start(a) + "," + start(b);
        AggregatorProperties properties = GrpcOnlyProperties.to(target, DEADLINE);
        channel = GrpcClientConfiguration.unaryChannel(
                properties, loops, ClientTls.plaintext(), GrpcChannelMaker.plain());
        return channel;
    }

    private String start(Replica replica) throws IOException {
        Server server = Grpc.newServerBuilderForPort(0, InsecureServerCredentials.create())
                .addService(replica)
                .build()
                .start();
        replica.server = server;
        servers.add(server);
        return "127.0.0.1:" + server.getPort();
    }

    /** round_robin picks only connected replicas: until both are, the spread is not yet even. */
    private static void awaitBothInUse(GrpcUnarySquareClient client, Replica a, Replica b) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (a.calls.get() == 0 || b.calls.get() == 0) {
            assertThat(System.nanoTime()).as("both replicas in use").isLessThan(deadline);
            client.square(1, Shape.SMALL).onErrorResume(e -> Mono.empty()).block();
            Thread.sleep(10);
        }
    }

    /** A square service whose unary answers {@code answer} decides (null: never, -1: UNAVAILABLE), and whose streams may die. */
    private static final class Replica extends SquareRpcGrpc.SquareRpcImplBase {

        final AtomicInteger calls = new AtomicInteger();
        private final Function<Integer, Long> answer;
        volatile Function<Integer, Integer> dieAfter = answers -> Integer.MAX_VALUE;
        volatile Server server;
        volatile boolean died;

        Replica() {
            this(number -> (long) number * number);
        }

        Replica(Function<Integer, Long> answer) {
            this.answer = answer;
        }

        @Override
        public void findSquareUnary(Input request, StreamObserver<Output> answers) {
            calls.incrementAndGet();
            Long square = answer.apply(request.getNumber());
            if (square != null && square == -1L) {
                answers.onError(Status.UNAVAILABLE.withDescription("going away").asRuntimeException());
            } else if (square != null) {
                answers.onNext(Output.newBuilder()
                        .setNumber(request.getNumber())
                        .setResult(square)
                        .build());
                answers.onCompleted();
            }
        }

        @Override
        public StreamObserver<Input> findSquareBiStream(StreamObserver<Output> answers) {
            int limit = dieAfter.apply(0);
            return new StreamObserver<>() {
                private int answered;

                @Override
                public void onNext(Input input) {
                    if (answered++ < limit) {
                        answers.onNext(InProcessSquareServer.square(input.getNumber()));
                    } else if (!died) {
                        // The whole server goes, mid-stream, as in a crash.
                        died = true;
                        server.shutdownNow();
                    }
                }

                @Override
                public void onError(Throwable t) {}

                @Override
                public void onCompleted() {
                    answers.onCompleted();
                }
            };
        }
    }
}
