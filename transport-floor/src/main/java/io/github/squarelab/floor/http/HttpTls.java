package io.github.squarelab.floor.http;

import io.github.squarelab.floor.FloorTls;
import io.github.squarelab.floor.measure.Negotiated;
import io.github.squarelab.tls.TlsWords;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.ssl.ApplicationProtocolConfig;
import io.netty.handler.ssl.ApplicationProtocolNames;
import io.netty.handler.ssl.ApplicationProtocolNegotiationHandler;
import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.JdkSslContext;
import io.netty.handler.ssl.NotSslRecordException;
import io.netty.handler.ssl.OpenSsl;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslHandshakeCompletionEvent;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.IntToLongFunction;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSession;

/**
 * TLS for the bare HTTP transports, as the REST square service and the aggregator's Reactor Netty client have it:
 * HTTP/2 or HTTP/1.1 chosen by ALPN on the server's one port, the client offering only the protocol its path speaks
 * and checking the server's host name; Netty's default engine (BoringSSL where netty-tcnative loads).
 */
final class HttpTls {

    private HttpTls() {}

    /** What encrypts here: Netty's OpenSSL engine where it loads (Netty then prefers it), else the JDK's. */
    static String provider() {
        return TlsWords.provider(OpenSsl.isAvailable(), OpenSsl::versionString);
    }

    /** What a context made here encrypts with: the JDK's SSLEngine for a JdkSslContext, else OpenSSL's. */
    static String provider(SslContext context) {
        return TlsWords.provider(!(context instanceof JdkSslContext), OpenSsl::versionString);
    }

    /** A failed connection's error, its TLS cause in the services' words ("Received fatal alert: …") if it has one. */
    static String inWords(Throwable cause) {
        for (Throwable found = cause; found != null; found = found.getCause() == found ? null : found.getCause()) {
            if (found instanceof SSLException || found instanceof NotSslRecordException) {
                return "the TLS connection failed: " + TlsWords.refusal(found);
            }
        }
        return String.valueOf(cause);
    }

    static SslContext server(FloorTls tls) {
        try {
            SslContextBuilder builder = SslContextBuilder.forServer(tls.certificate(), tls.key())
                    .applicationProtocolConfig(
                            alpn(ApplicationProtocolNames.HTTP_2, ApplicationProtocolNames.HTTP_1_1));
            if (tls.isMutual()) {
                builder.trustManager(tls.ca()).clientAuth(ClientAuth.REQUIRE);
            }
            return builder.build();
        } catch (SSLException | IllegalArgumentException e) {
            throw new IllegalArgumentException(
                    "cannot serve TLS with " + tls.certificate().getName() + ": " + e.getMessage(), e);
        }
    }

    /** @param protocol the one protocol the client offers: h2 for rest_h2c, http/1.1 for rest_unary */
    static SslContext client(FloorTls tls, String protocol) {
        try {
            SslContextBuilder builder =
                    SslContextBuilder.forClient().trustManager(tls.ca()).applicationProtocolConfig(alpn(protocol));
            if (tls.isMutual()) {
                builder.keyManager(tls.certificate(), tls.key());
            }
            return builder.build();
        } catch (SSLException | IllegalArgumentException e) {
            throw new IllegalArgumentException(
                    "cannot make a TLS client with " + tls.ca().getName() + ": " + e.getMessage(), e);
        }
    }

    /** The client's SslHandler for host:port, checking that the server's certificate names the host. */
    static SslHandler clientHandler(SslContext context, io.netty.channel.Channel channel, String host, int port) {
        SslHandler handler = context.newHandler(channel.alloc(), host, port);
        SSLParameters parameters = handler.engine().getSSLParameters();
        parameters.setEndpointIdentificationAlgorithm("HTTPS");
        handler.engine().setSSLParameters(parameters);
        return handler;
    }

    private static ApplicationProtocolConfig alpn(String... protocols) {
        return new ApplicationProtocolConfig(
                ApplicationProtocolConfig.Protocol.ALPN,
                ApplicationProtocolConfig.SelectorFailureBehavior.NO_ADVERTISE,
                ApplicationProtocolConfig.SelectedListenerFailureBehavior.ACCEPT,
                protocols);
    }

    /** The server's handler after its SslHandler: HTTP/2 or HTTP/1.1 as ALPN chose; one line for each refusal. */
    static final class ByAlpn extends ApplicationProtocolNegotiationHandler {

        private final SquareHandler http1;
        private final IntToLongFunction square;

        ByAlpn(SquareHandler http1, IntToLongFunction square) {
            super(ApplicationProtocolNames.HTTP_1_1);
            this.http1 = http1;
            this.square = square;
        }

        @Override
        protected void configurePipeline(ChannelHandlerContext ctx, String protocol) {
            if (ApplicationProtocolNames.HTTP_2.equals(protocol)) {
                PriorKnowledge.http2(ctx.pipeline(), square);
            } else {
                PriorKnowledge.http1(ctx.pipeline(), http1);
            }
        }

        /** Plaintext on the port is a refusal too: Netty's own handler would log it with a stack trace. */
        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) throws Exception {
            if (cause instanceof NotSslRecordException) {
                handshakeFailure(ctx, cause);
                return;
            }
            super.exceptionCaught(ctx, cause);
        }

        @Override
        protected void handshakeFailure(ChannelHandlerContext ctx, Throwable cause) {
            System.err.println(
                    "refused a TLS connection from " + ctx.channel().remoteAddress() + ": " + TlsWords.refusal(cause));
            ctx.close();
        }
    }

    /**
     * The client's handler after its SslHandler: the first handshake's session is recorded, and a handshake that
     * failed, or that agreed on another protocol than the path speaks, fails the run in words, once: the SslHandler
     * reports a failed handshake both as an error and as an event, in either order, and only the first goes on.
     */
    static final class Checked extends ChannelInboundHandlerAdapter {

        private final String protocol;
        private final AtomicReference<Negotiated> negotiated;
        private boolean reported;

        Checked(String protocol, AtomicReference<Negotiated> negotiated) {
            this.protocol = protocol;
            this.negotiated = negotiated;
        }

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object event) throws Exception {
            if (event instanceof SslHandshakeCompletionEvent handshake) {
                ChannelPipeline pipeline = ctx.pipeline();
                if (!handshake.isSuccess()) {
                    if (!reported) {
                        reported = true;
                        ctx.fireExceptionCaught(new SSLException(
                                "the TLS handshake failed: " + TlsWords.refusal(handshake.cause()), handshake.cause()));
                    }
                    return;
                }
                SslHandler ssl = pipeline.get(SslHandler.class);
                String agreed = ssl.applicationProtocol();
                if (!protocol.equals(agreed)) {
                    reported = true;
                    ctx.fireExceptionCaught(new SSLException("ALPN agreed on " + agreed + ", not " + protocol
                            + " (does the server offer " + protocol + "?)"));
                    return;
                }
                SSLSession session = ssl.engine().getSession();
                negotiated.compareAndSet(
                        null,
                        new Negotiated(
                                provider(ssl.engine()), session.getProtocol(), session.getCipherSuite(), agreed));
                pipeline.remove(this);
            }
            super.userEventTriggered(ctx, event);
        }

        /** Until the handshake is done, the first failure goes on (the SslHandler's error or the event's), no more. */
        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) throws Exception {
            if (!reported) {
                reported = true;
                super.exceptionCaught(ctx, cause);
            }
        }

        /** The engine's own kind, OpenSSL's or the JDK's, rather than what Netty would prefer. */
        private static String provider(SSLEngine engine) {
            return TlsWords.provider(engine.getClass().getName().contains("OpenSsl"), OpenSsl::versionString);
        }
    }
}
