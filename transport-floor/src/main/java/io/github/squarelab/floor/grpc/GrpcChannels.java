package io.github.squarelab.floor.grpc;

import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.netty.channel.epoll.Epoll;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/** The one channel (one HTTP/2 connection) each gRPC load uses, as the aggregator does. */
final class GrpcChannels {

    /** Cancelling is local and immediate; this only guards against a call that never reports its end. */
    static final Duration GIVE_UP_GRACE = Duration.ofSeconds(5);

    private GrpcChannels() {
    }

    /**
     * Plaintext, with callbacks on the direct executor, that is on the channel's Netty event loop: ours
     * only check an answer and start the next call, never block, which is the case grpc-java recommends
     * it for, and the HTTP client runs its callbacks on its event loops too.
     */
    static ManagedChannel open(String target) {
        return Grpc.newChannelBuilder(target, InsecureChannelCredentials.create()).directExecutor().build();
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
