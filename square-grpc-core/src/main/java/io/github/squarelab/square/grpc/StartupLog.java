package io.github.squarelab.square.grpc;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Lines that say where to reach the service, with the ports actually bound: each Spring generation's GrpcServerWiring
 * calls them when it hears that its gRPC server or its actuator's web server listens (events each generation's
 * starters name differently).
 */
public final class StartupLog {

    private static final Logger log = LoggerFactory.getLogger(StartupLog.class);

    private StartupLog() {}

    public static void grpcListening(boolean tls, boolean mutual, String address, int port) {
        log.info(
                "square-grpc-service listening: gRPC ({}) vinsmath.SquareRpc on {}:{}",
                !tls ? "plaintext" : mutual ? "TLS, a client certificate required" : "TLS",
                address,
                port);
    }

    public static void actuatorListening(int port) {
        log.info("square-grpc-service health and metrics under http://localhost:{}/actuator", port);
    }
}
