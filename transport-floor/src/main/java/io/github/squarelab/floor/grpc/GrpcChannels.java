package io.github.squarelab.floor.grpc;

import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.netty.channel.epoll.Epoll;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/** The one channel (one HTTP/2 connection) each gRPC load uses, as the aggregator has. */
final class GrpcChannels {

    /** Cancelling is local and immediate; this only guards against a call that never reports its end. */
    static final Duration GIVE_UP_GRACE = Duration.ofSeconds(5);

    private GrpcChannels() {
    }

    /**
     * Plaintext, with callbacks on the direct executor, that is on the channel's Netty event loop, for
     * callbacks that are short and never block (a unary answer: check it, start the next call). This is
     * the case grpc-java recommends it for, and it is where the HTTP client runs its callbacks too.
     */
    static ManagedChannel withShortCallbacks(String target) {
        return Grpc.newChannelBuilder(target, InsecureChannelCredentials.create()).directExecutor().build();
    }

    /**
     * Plaintext, with callbacks on grpc-java's default executor (its shared cached pool), for callbacks that
     * do bulk work: a stream's onReady sends until its flow-control window is full, thousands of messages,
     * and on the event loop that would keep the connection from reading answers meanwhile (measured: no
     * answer at all for seconds at a time with 100 streams).
     */
    static ManagedChannel withLongCallbacks(String target) {
        return Grpc.newChannelBuilder(target, InsecureChannelCredentials.create()).build();
    }

    static void close(ManagedChannel channel) {
        try {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Which I/O grpc-netty-shaded uses here: it picks native epoll on Linux when it can. */
    static String io() {
        return Epoll.isAvailable() ? "epoll" : "nio";
    }
}
