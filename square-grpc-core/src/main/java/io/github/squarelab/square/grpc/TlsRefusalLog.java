package io.github.squarelab.square.grpc;

import io.github.squarelab.tls.TlsWords;
import java.util.List;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.regex.Pattern;
import javax.net.ssl.SSLException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.DisposableBean;

/**
 * Under TLS, one line per connection whose handshake the service refused, saying why (an untrusted or missing client
 * certificate, plaintext on the TLS port, no h2 offered by ALPN), where grpc-java says nothing at its default level.
 *
 * <p>grpc-java hands a refused handshake's cause to no public hook. It logs it only at FINE, through
 * java.util.logging, on two loggers of its own: its protocol negotiation says that a handshake failed, with the
 * session it got (a protocol when the handshake itself succeeded but ALPN found nothing in common), and its
 * channel's last handler logs the TLS error once it has failed the channel for it ("Ignoring duplicate failure").
 * This handler takes those records there, and only those, and says them in one line; the peer is known in neither,
 * so the line names none. A connection closed before it sent anything (a TCP probe) is no refusal and says nothing.
 * {@code TlsRefusalLogTests} pins these records on the grpc-java the service is built with. The channels' handler is
 * grpc-java's on the client side too: this service makes no outgoing gRPC calls, so every record it sees is a refusal.
 *
 * <p>The loggers are grpc-netty's, under the package its transport has: grpc-netty-shaded's (net.devh, Spring Boot
 * 3.5) or grpc-netty's own (Spring gRPC, Spring Boot 4.1); each generation's GrpcServerWiring names it.
 */
public class TlsRefusalLog extends Handler implements DisposableBean {

    /** grpc-netty-shaded's package of grpc-netty, which net.devh serves on. */
    public static final String SHADED = "io.grpc.netty.shaded.io.grpc.netty";

    /** grpc-netty's own package, which Spring gRPC serves on by default. */
    public static final String UNSHADED = "io.grpc.netty";

    /** grpc-netty's two loggers under its package: its TLS negotiation, and its channels' last handler. */
    static List<String> loggers(String grpcNettyPackage) {
        return List.of(
                grpcNettyPackage + ".ProtocolNegotiators", grpcNettyPackage + ".WriteBufferingAndExceptionHandler");
    }

    /** A negotiation that failed after the handshake: TLS was agreed (its protocol is named), ALPN was not. */
    private static final Pattern NEGOTIATED_WITHOUT_ALPN =
            Pattern.compile("(?s)^TLS negotiation failed.*TLS Protocol: TLS");

    private static final Logger log = LoggerFactory.getLogger(TlsRefusalLog.class);

    // java.util.logging holds its loggers weakly: these keep the level and the handler set on them.
    private final List<java.util.logging.Logger> grpcLoggers;

    /** The loggers' levels before this handler set them, restored when the service stops. */
    private final List<Level> levelsBefore;

    /** @param grpcNettyPackage {@link #SHADED} or {@link #UNSHADED}: where the server's grpc-netty logs */
    public TlsRefusalLog(String grpcNettyPackage) {
        grpcLoggers = loggers(grpcNettyPackage).stream()
                .map(java.util.logging.Logger::getLogger)
                .toList();
        levelsBefore =
                grpcLoggers.stream().map(java.util.logging.Logger::getLevel).toList();
        for (java.util.logging.Logger logger : grpcLoggers) {
            synchronized (logger) {
                logger.addHandler(this);
                // Their other records still reach the parent's handlers (Spring Boot's bridge to Logback), which
                // drop FINE unless asked for DEBUG there.
                Level level = logger.getLevel();
                if (level == null || level.intValue() > Level.FINE.intValue()) {
                    logger.setLevel(Level.FINE);
                }
            }
        }
    }

    /** Leaves grpc-java's loggers as they were when the service stops (or a test's context closes). */
    @Override
    public void destroy() {
        for (int i = 0; i < grpcLoggers.size(); i++) {
            java.util.logging.Logger logger = grpcLoggers.get(i);
            synchronized (logger) {
                logger.removeHandler(this);
                logger.setLevel(levelsBefore.get(i));
            }
        }
    }

    @Override
    public void publish(LogRecord record) {
        String message = String.valueOf(record.getMessage());
        if (record.getThrown() == null
                && NEGOTIATED_WITHOUT_ALPN.matcher(message).find()) {
            log.warn("refused a TLS connection: no application protocol in common (the client did not offer h2 by"
                    + " ALPN)");
        } else if (message.startsWith("Ignoring duplicate failure") && fromTls(record.getThrown())) {
            log.warn("refused a TLS connection: {}", TlsWords.refusal(record.getThrown()));
        }
    }

    /** Whether a failure comes from the TLS handshake: an SSLException, or Netty's word for plaintext, under it. */
    private static boolean fromTls(Throwable error) {
        for (Throwable cause = error; cause != null; cause = cause.getCause() == cause ? null : cause.getCause()) {
            if (cause instanceof SSLException
                    || cause.getClass().getSimpleName().equals("NotSslRecordException")) {
                return true;
            }
        }
        return false;
    }

    @Override
    public void flush() {}

    @Override
    public void close() {}
}
