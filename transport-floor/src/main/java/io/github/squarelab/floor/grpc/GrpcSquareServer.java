package io.github.squarelab.floor.grpc;

import io.github.squarelab.floor.FloorTls;
import io.github.squarelab.floor.SquareServer;
import io.grpc.InsecureServerCredentials;
import io.grpc.Server;
import io.grpc.ServerCredentials;
import io.grpc.TlsServerCredentials;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.util.Optional;
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
        this(host, port, square, Optional.empty());
    }

    /** @param tls under TLS, the server's certificate and key and, for mutual TLS, its clients' CA; else empty */
    public GrpcSquareServer(String host, int port, IntToLongFunction square, Optional<FloorTls> tls) {
        try {
            server = NettyServerBuilder.forAddress(new InetSocketAddress(host, port), credentials(tls))
                    .directExecutor()
                    .addService(new SquareService(square))
                    .build()
                    .start();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot listen on " + host + ":" + port, e);
        }
    }

    /**
     * grpc-java's TlsServerCredentials (on its BoringSSL where it loads), as net.devh's grpc.server.security configures
     * the gRPC square service; a client certificate required for mutual TLS.
     */
    private static ServerCredentials credentials(Optional<FloorTls> tls) {
        if (tls.isEmpty()) {
            return InsecureServerCredentials.create();
        }
        FloorTls found = tls.get();
        try {
            TlsServerCredentials.Builder builder =
                    TlsServerCredentials.newBuilder().keyManager(found.certificate(), found.key());
            if (found.isMutual()) {
                builder.trustManager(found.ca()).clientAuth(TlsServerCredentials.ClientAuth.REQUIRE);
            }
            return builder.build();
        } catch (IOException | IllegalArgumentException e) {
            throw new IllegalArgumentException("cannot read the TLS server's PEM files: " + e.getMessage(), e);
        }
    }

    /** What encrypts under TLS: grpc-java does not say which engine its credentials chose, so what it prefers. */
    @Override
    public String tlsProvider() {
        return GrpcChannels.provider();
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
