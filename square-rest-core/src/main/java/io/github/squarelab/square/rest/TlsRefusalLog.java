package io.github.squarelab.square.rest;

import io.github.squarelab.tls.TlsWords;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.ssl.SslHandshakeCompletionEvent;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.eclipse.jetty.io.ssl.SslHandshakeListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.netty.NettyPipeline;
import reactor.netty.http.server.HttpServer;

/**
 * One line per connection whose TLS handshake the service refused, saying who and why (an untrusted or missing client
 * certificate, plaintext on the TLS port), on each server: on Reactor Netty in place of Netty's two warnings with
 * stack traces (application.yml quiets them); on Jetty and Tomcat, which say nothing of it at their default levels,
 * from Jetty's handshake listener and from Tomcat's own handshake log.
 */
public final class TlsRefusalLog {

    private static final Logger log = LoggerFactory.getLogger(TlsRefusalLog.class);

    private TlsRefusalLog() {}

    static void refused(Object from, Throwable why) {
        log.warn("refused a TLS connection from {}: {}", from, TlsWords.refusal(why));
    }

    /**
     * Reactor Netty (square.server=netty): a handler after the SslHandler that hears how its handshake ended; each
     * Spring generation's wiring hands it to Reactor Netty as that generation's NettyServerCustomizer.
     */
    public static final class OnNetty {

        private OnNetty() {}

        public static HttpServer apply(HttpServer server) {
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
                        refused(context.channel().remoteAddress(), handshake.cause());
                    }
                    context.pipeline().remove(this);
                }
                super.userEventTriggered(context, event);
            }
        }
    }

    /** Jetty (square.server=jetty): a listener its SslConnectionFactory tells of every failed handshake. */
    public static final class OnJetty implements SslHandshakeListener {

        @Override
        public void handshakeFailed(Event event, Throwable failure) {
            var engine = event.getSSLEngine();
            refused("/" + engine.getPeerHost() + ":" + engine.getPeerPort(), failure);
        }
    }

    /**
     * Tomcat (square.server=tomcat) logs a failed handshake, with who, only at FINE on its own logger (through
     * java.util.logging): this handler takes those records there, and only those, and says them in one line.
     */
    public static final class OnTomcat extends Handler {

        static final String LOGGER = "org.apache.tomcat.util.net.NioEndpoint.handshake";

        private static final Pattern WHO = Pattern.compile("IP address \\[(.*?)\\] and port \\[(\\d+)\\]");

        // java.util.logging holds its loggers weakly: this keeps the level and the handler set on it.
        private static final java.util.logging.Logger HANDSHAKES = java.util.logging.Logger.getLogger(LOGGER);

        public static void install() {
            if (HANDSHAKES.getHandlers().length == 0) {
                HANDSHAKES.setUseParentHandlers(false);
                HANDSHAKES.addHandler(new OnTomcat());
                HANDSHAKES.setLevel(Level.FINE);
            }
        }

        @Override
        public void publish(LogRecord record) {
            if (record.getThrown() == null) {
                return;
            }
            Matcher who = WHO.matcher(String.valueOf(record.getMessage()));
            refused(who.find() ? "/" + who.group(1) + ":" + who.group(2) : "a client", record.getThrown());
        }

        @Override
        public void flush() {}

        @Override
        public void close() {}
    }
}
