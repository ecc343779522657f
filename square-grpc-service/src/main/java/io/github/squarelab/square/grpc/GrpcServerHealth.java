package io.github.squarelab.square.grpc;

import net.devh.boot.grpc.server.event.GrpcServerShutdownEvent;
import net.devh.boot.grpc.server.event.GrpcServerStartedEvent;
import org.springframework.boot.actuate.health.Health;
import org.springframework.boot.actuate.health.HealthIndicator;
import org.springframework.context.event.EventListener;
import org.springframework.stereotype.Component;

/**
 * The service can serve only while its gRPC server listens: the actuator's HTTP port starts first, and
 * without this /actuator/health said UP while calls to the gRPC port were still refused.
 */
@Component("grpcServer")
class GrpcServerHealth implements HealthIndicator {

    private volatile boolean listening;

    @EventListener
    void onStarted(GrpcServerStartedEvent event) {
        listening = true;
    }

    @EventListener
    void onShutdown(GrpcServerShutdownEvent event) {
        listening = false;
    }

    @Override
    public Health health() {
        return listening
                ? Health.up().build()
                : Health.down().withDetail("grpc", "not listening").build();
    }
}
