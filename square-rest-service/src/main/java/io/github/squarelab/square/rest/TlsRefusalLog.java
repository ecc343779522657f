package io.github.squarelab.square.rest;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.ssl.SslHandshakeCompletionEvent;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.web.embedded.netty.NettyServerCustomizer;
import reactor.netty.NettyPipeline;
import reactor.netty.http.server.HttpServer;

/**
 * On Reactor Netty (square.server=netty), one line per connection whose TLS handshake fails, saying who and why (an
 * untrusted or missing client certificate, plaintext on the TLS port), in place of Netty's two warnings with stack
 * traces (application.yml quiets them).
 */
class TlsRefusalLog implements NettyServerCustomizer {

    private static final Logger log = LoggerFactory.getLogger(TlsRefusalLog.class);

    @Override
    public HttpServer apply(HttpServer server) {
        return server.doOnChannelInit((observer, channel, remote) -> {
            if (channel.pipeline().get(NettyPipeline.SslHandler) != null) {
                channel.pipeline().addAfter(NettyPipeline.SslHandler, "squareTlsRefusalLog", new Refusals());
            }
        });
    }

    private static final class Refusals extends ChannelInboundHandlerAdapter {

        @Override
        public void userEventTriggered(ChannelHandlerContext context, Object event) throws Exception {
            if (event instanceof SslHandshakeCompletionEvent handshake) {
                if (!handshake.isSuccess()) {
                    log.warn(
                            "refused a TLS connection from {}: {}",
                            context.channel().remoteAddress(),
                            rootMessage(handshake.cause()));
                }
                context.pipeline().remove(this);
            }
            super.userEventTriggered(context, event);
        }
    }

    static String rootMessage(Throwable error) {
        Throwable root = error;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        String message =
                root.getMessage() != null ? root.getMessage() : root.getClass().getSimpleName();
        // Netty quotes the bytes of a plaintext request in hex: say what they were instead.
        return message.startsWith("not an SSL/TLS record") ? "not TLS (plaintext on the TLS port?)" : message;
    }
}
