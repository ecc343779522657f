package io.github.squarelab.floor.grpc;

import io.github.squarelab.floor.FloorTls;
import io.github.squarelab.floor.measure.FloorFailure;
import io.github.squarelab.floor.measure.Negotiated;
import io.github.squarelab.proto.Input;
import io.github.squarelab.proto.Output;
import io.github.squarelab.proto.SquareRpcGrpc;
import io.github.squarelab.tls.TlsWords;
import io.grpc.CallOptions;
import io.grpc.ChannelCredentials;
import io.grpc.ClientCall;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import io.grpc.TlsChannelCredentials;
import io.grpc.netty.shaded.io.netty.channel.epoll.Epoll;
import io.grpc.netty.shaded.io.netty.handler.ssl.OpenSsl;
import io.grpc.stub.ClientCalls;
import java.io.IOException;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLSession;

/** The one channel (one HTTP/2 connection) each gRPC load uses, as the aggregator has. */
final class GrpcChannels {

    private GrpcChannels() {}

    /**
     * Callbacks on the event loop (direct executor) as the aggregator's: none of them blocks. Plaintext, or TLS with
     * the tls given (grpc-java's TlsChannelCredentials, on BoringSSL where netty-tcnative loads, as the aggregator's).
     */
    static ManagedChannel withShortCallbacks(String target, Optional<FloorTls> tls) {
        return Grpc.newChannelBuilder(target, credentials(tls)).directExecutor().build();
    }

    /** As {@link #withShortCallbacks}, without grpc-java's retry, as the aggregator's pipelined stream's channel. */
    static ManagedChannel withShortCallbacksAndNoRetry(String target, Optional<FloorTls> tls) {
        return Grpc.newChannelBuilder(target, credentials(tls))
                .directExecutor()
                .disableRetry()
                .build();
    }

    private static ChannelCredentials credentials(Optional<FloorTls> tls) {
        if (tls.isEmpty()) {
            return InsecureChannelCredentials.create();
        }
        FloorTls found = tls.get();
        try {
            TlsChannelCredentials.Builder builder =
                    TlsChannelCredentials.newBuilder().trustManager(found.ca());
            if (found.isMutual()) {
                builder.keyManager(found.certificate(), found.key());
            }
            return builder.build();
        } catch (IOException | IllegalArgumentException e) {
            throw new IllegalArgumentException("cannot read the TLS client's PEM files: " + e.getMessage(), e);
        }
    }

    /**
     * Under TLS, one call on the channel before the load's, which makes its handshake and says what it agreed on (the
     * warm-up discards it); a handshake that fails fails the run, in words.
     */
    static Optional<Negotiated> handshake(ManagedChannel channel, Optional<FloorTls> tls, Duration timeout, String name)
            throws FloorFailure {
        if (tls.isEmpty()) {
            return Optional.empty();
        }
        ClientCall<Input, Output> call = channel.newCall(
                SquareRpcGrpc.getFindSquareUnaryMethod(),
                CallOptions.DEFAULT.withDeadlineAfter(timeout.toNanos(), TimeUnit.NANOSECONDS));
        try {
            ClientCalls.blockingUnaryCall(call, Input.newBuilder().setNumber(1).build());
        } catch (StatusRuntimeException e) {
            throw new FloorFailure(
                    name + ": the TLS handshake or its first call failed: "
                            + e.getStatus().getCode() + why(e),
                    e);
        }
        SSLSession session = call.getAttributes().get(Grpc.TRANSPORT_ATTR_SSL_SESSION);
        if (session == null) {
            throw new FloorFailure(name + ": the channel's transport has no TLS session");
        }
        // grpc-java fails a connection whose ALPN did not agree on h2, so a session here is an h2 one.
        return Optional.of(new Negotiated(provider(), session.getProtocol(), session.getCipherSuite(), "h2"));
    }

    /** The cause in the services' words, on one line; else the status's own description's first line. */
    private static String why(StatusRuntimeException e) {
        if (e.getCause() != null) {
            return " (" + TlsWords.refusal(e.getCause()) + ")";
        }
        String description = e.getStatus().getDescription();
        return description == null ? "" : " (" + description.lines().findFirst().orElse("") + ")";
    }

    /**
     * What encrypts in grpc-netty-shaded: its BoringSSL where it loads (grpc-java's credentials then choose it), else
     * the JDK's. grpc-java does not show which engine a channel's or server's credentials chose.
     */
    static String provider() {
        return TlsWords.provider(OpenSsl.isAvailable(), OpenSsl::versionString);
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
