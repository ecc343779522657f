package io.github.squarelab.aggregator.grpc;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.squarelab.aggregator.AggregatorProperties;
import io.github.squarelab.aggregator.netty.ClientEventLoops;
import io.github.squarelab.aggregator.tls.ClientTls;
import io.github.squarelab.payload.Shape;
import io.github.squarelab.proto.SquareRpcGrpc;
import io.grpc.Grpc;
import io.grpc.InsecureServerCredentials;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerServiceDefinition;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;

/**
 * The aggregator's channel as configured keeps the messages of unary calls that may still be retried (until the
 * answer's headers arrive) as message objects, several times their wire size on the heap: under overload, with
 * payloads, that buffer must stay a small part of the lab's 128 MiB heap. The pipelined stream's channel keeps none.
 */
class GrpcRetryBufferTests {

    private static final Duration DEADLINE = Duration.ofSeconds(30);

    private Server server;
    private final ClientEventLoops loops = new ClientEventLoops("test-client");
    private ManagedChannel channel;

    @AfterEach
    void stop() throws InterruptedException {
        if (channel != null) {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
        loops.close();
        if (server != null) {
            server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    @Test
    void unaryCallsAwaitingTheirAnswersKeepLittleOfTheirPayloads() throws Exception {
        AtomicInteger received = new AtomicInteger();
        GrpcUnarySquareClient client = new GrpcUnarySquareClient(channelTo(silentServer(received)), "silent", DEADLINE);
        List<Disposable> calls = new ArrayList<>();
        try {
            int waiting = 6_000;
            long empty = usedHeapAfterGc();
            long withSmall = hold(client, Shape.SMALL, waiting, calls, received);
            long withCollection = hold(client, Shape.COLLECTION, waiting, calls, received);
            long extraPerCall = ((withCollection - withSmall) - (withSmall - empty)) / waiting;

            // With grpc-java's default buffer (16 MiB of wire bytes) each of these collection calls kept its ~10 KB
            // of message objects until its answer, and a 128 MiB aggregator with 800 clients asking
            // /grpc/unary/8?payload=collection ran out of memory.
            assertThat(extraPerCall)
                    .as("heap bytes a collection call awaiting its answer holds beyond a small one")
                    .isLessThan(5_000);
        } finally {
            calls.forEach(Disposable::dispose);
        }
    }

    @Test
    void pipelinedStreamsAwaitingTheirFirstAnswerKeepLittleOfTheirMessages() throws Exception {
        AtomicInteger received = new AtomicInteger();
        GrpcStreamSquareClient client =
                GrpcStreamSquareClient.pipelined(streamChannelTo(silentServer(received)), "silent", DEADLINE);
        int streams = 20;
        int messages = 5_000;
        List<Disposable> calls = new ArrayList<>();
        try {
            long empty = usedHeapAfterGc();
            for (int i = 0; i < streams; i++) {
                calls.add(client.squares(messages, Shape.SMALL, new CountingRecorder())
                        .subscribe(squares -> {}, error -> {}));
            }
            awaitReceived(received, streams * messages);
            long perStream = (usedHeapAfterGc() - empty) / streams;

            // grpc-java's retry kept every message of a stream until its first answer, some 150 bytes of objects for
            // each small message; what a stream holds itself is its send times and its squares, 16 bytes a number.
            assertThat(perStream)
                    .as("heap bytes a stream of %d messages, all sent and none answered, holds", messages)
                    .isLessThan(300_000);
        } finally {
            calls.forEach(Disposable::dispose);
        }
    }

    /** Starts {@code count} more calls of {@code shape}, waits until the server has them all; the heap then used. */
    private static long hold(
            GrpcUnarySquareClient client, Shape shape, int count, List<Disposable> calls, AtomicInteger received)
            throws InterruptedException {
        int alreadyReceived = received.get();
        for (int i = 0; i < count; i++) {
            calls.add(client.square(1_000 + i, shape).subscribe(square -> {}, error -> {}));
        }
        awaitReceived(received, alreadyReceived + count);
        return usedHeapAfterGc();
    }

    private static void awaitReceived(AtomicInteger received, int expected) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (received.get() < expected && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertThat(received).as("messages that reached the server").hasValue(expected);
    }

    /** Takes every unary call's and stream's messages, reads and drops them, and never answers, not even with headers. */
    private static ServerServiceDefinition silentServer(AtomicInteger received) {
        MethodDescriptor.Marshaller<Object> dropping = new MethodDescriptor.Marshaller<>() {
            @Override
            public InputStream stream(Object value) {
                throw new UnsupportedOperationException();
            }

            @Override
            public Object parse(InputStream stream) {
                try {
                    stream.transferTo(OutputStream.nullOutputStream());
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
                return Boolean.TRUE;
            }
        };
        MethodDescriptor<Object, Object> unary = MethodDescriptor.newBuilder(dropping, dropping)
                .setType(MethodDescriptor.MethodType.UNARY)
                .setFullMethodName(SquareRpcGrpc.getFindSquareUnaryMethod().getFullMethodName())
                .build();
        MethodDescriptor<Object, Object> stream = unary.toBuilder()
                .setType(MethodDescriptor.MethodType.BIDI_STREAMING)
                .setFullMethodName(SquareRpcGrpc.getFindSquareBiStreamMethod().getFullMethodName())
                .build();
        ServerCallHandler<Object, Object> readEverything = (call, headers) -> {
            call.request(Integer.MAX_VALUE);
            return new ServerCall.Listener<>() {
                @Override
                public void onMessage(Object message) {
                    received.incrementAndGet();
                }
            };
        };
        return ServerServiceDefinition.builder(SquareRpcGrpc.SERVICE_NAME)
                .addMethod(unary, readEverything)
                .addMethod(stream, readEverything)
                .build();
    }

    /** The aggregator's channel for unary calls and ping-pong. */
    private ManagedChannel channelTo(ServerServiceDefinition service) throws IOException {
        channel = GrpcClientConfiguration.unaryChannel(
                serving(service), loops, ClientTls.plaintext(), GrpcChannelMaker.plain());
        return channel;
    }

    /** The aggregator's channel for the pipelined stream. */
    private ManagedChannel streamChannelTo(ServerServiceDefinition service) throws IOException {
        channel = GrpcClientConfiguration.streamChannel(
                serving(service), loops, ClientTls.plaintext(), GrpcChannelMaker.plain());
        return channel;
    }

    private AggregatorProperties serving(ServerServiceDefinition service) throws IOException {
        server = Grpc.newServerBuilderForPort(0, InsecureServerCredentials.create())
                .addService(service)
                .build()
                .start();
        return GrpcOnlyProperties.to("127.0.0.1:" + server.getPort(), DEADLINE);
    }

    private static long usedHeapAfterGc() throws InterruptedException {
        for (int i = 0; i < 3; i++) {
            System.gc();
            Thread.sleep(50);
        }
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }
}
