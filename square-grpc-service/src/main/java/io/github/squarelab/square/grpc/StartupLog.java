package io.github.squarelab.square.grpc;

import net.devh.boot.grpc.server.event.GrpcServerStartedEvent;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.web.context.WebServerInitializedEvent;
import org.springframework.context.event.EventListener;
import org.springframework.core.env.Environment;
import org.springframework.stereotype.Component;

/** Lines that say where to reach the service, with the ports actually bound. */
@Component
class StartupLog {

    private static final Logger log = LoggerFactory.getLogger(StartupLog.class);

    private final Environment environment;

    StartupLog(Environment environment) {
        this.environment = environment;
    }

    @EventListener
    void onGrpcServerStarted(GrpcServerStartedEvent event) {
        boolean tls = environment.getProperty("grpc.server.security.enabled", Boolean.class, false);
        boolean mutual = "REQUIRE".equalsIgnoreCase(environment.getProperty("grpc.server.security.client-auth", ""));
        log.info(
                "square-grpc-service listening: gRPC ({}) vinsmath.SquareRpc on {}:{}",
                !tls ? "plaintext" : mutual ? "TLS, a client certificate required" : "TLS",
                event.getAddress(),
                event.getPort());
    }

    @EventListener
    void onWebServerStarted(WebServerInitializedEvent event) {
        log.info(
                "square-grpc-service health and metrics under http://localhost:{}/actuator",
                event.getWebServer().getPort());
    }
}
