package io.github.squarelab.floor.grpc;

import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.netty.channel.epoll.Epoll;
import java.util.concurrent.TimeUnit;

/** The one channel (one HTTP/2 connection) each gRPC load uses, as the aggregator has. */
final class GrpcChannels {

    private GrpcChannels() {}

    /** Plaintext, callbacks on the event loop (direct executor) as the aggregator's: none of them blocks. */
    static ManagedChannel withShortCallbacks(String target) {
        return Grpc.newChannelBuilder(target, InsecureChannelCredentials.create())
                .directExecutor()
                .build();
    }

    /** As {@link #withShortCallbacks}, without grpc-java's retry, as the aggregator's pipelined stream's channel. */
    static ManagedChannel withShortCallbacksAndNoRetry(String target) {
        return Grpc.newChannelBuilder(target, InsecureChannelCredentials.create())
                .directExecutor()
                .disableRetry()
                .build();
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
