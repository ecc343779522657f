package io.github.squarelab.square.grpc;

import net.devh.boot.grpc.server.event.GrpcServerStartedEvent;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.web.context.WebServerInitializedEvent;
import org.springframework.context.event.EventListener;
import org.springframework.stereotype.Component;

/** Lines that say where to reach the service, with the ports actually bound. */
@Component
class StartupLog {

    private static final Logger log = LoggerFactory.getLogger(StartupLog.class);

    @EventListener
    void onGrpcServerStarted(GrpcServerStartedEvent event) {
        log.info(
                "square-grpc-service listening: gRPC (plaintext) vinsmath.SquareRpc on {}:{}",
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
