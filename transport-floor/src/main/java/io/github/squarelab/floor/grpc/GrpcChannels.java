package io.github.squarelab.floor.grpc;

import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.netty.channel.epoll.Epoll;
import java.util.concurrent.TimeUnit;

/** The one channel (one HTTP/2 connection) each gRPC load uses, as the aggregator has. */
final class GrpcChannels {

    private GrpcChannels() {
    }

    /**
     * Plaintext, with callbacks on the direct executor, that is on the channel's Netty event loop, as the
     * aggregator's channel has them. Every callback is short and never blocks: a unary answer is checked
     * and starts the next call; a stream's onReady sends at most its M messages (1000 of these are
     * about 8 KB, under isReady's 32 KiB, so usually all at once), an answer is checked, a completion
     * opens the next stream. This is the case grpc-java recommends it for, and it is where the HTTP
     * client runs its callbacks too. (grpc-java's default executor, a hop to its cached pool per
     * callback, did 22 to 38 % of the stream messages a second here, at 2.5 to 3.5 times the median
     * latency.)
     */
    static ManagedChannel withShortCallbacks(String target) {
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
