package io.github.squarelab.floor.grpc;

import io.github.squarelab.floor.SquareServer;
import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import java.util.function.IntToLongFunction;

/**
 * SquareRpc on plain grpc-java over Netty: no Spring, no interceptors, no metrics. Handlers run on the
 * event loop (direct executor), as the HTTP server's do, since they only multiply.
 */
public final class GrpcSquareServer implements SquareServer {

    private final Server server;

    /**
     * @param host the address to listen on, e.g. 127.0.0.1
     * @param port the port, or 0 for one the system chooses
     * @param square what to answer for a number: its square, or something else in tests
     */
    public GrpcSquareServer(String host, int port, IntToLongFunction square) {
        try {
            server = NettyServerBuilder.forAddress(new InetSocketAddress(host, port))
                    .directExecutor()
                    .addService(new SquareService(square))
                    .build()
                    .start();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot listen on " + host + ":" + port, e);
        }
    }

    @Override
    public int port() {
        return server.getPort();
    }

    @Override
    public void awaitTermination() throws InterruptedException {
        server.awaitTermination();
    }

    @Override
    public void close() {
        server.shutdown();
        try {
            if (!server.awaitTermination(2, TimeUnit.SECONDS)) {
                server.shutdownNow().awaitTermination(2, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            server.shutdownNow();
            Thread.currentThread().interrupt();
        }
    }
}
