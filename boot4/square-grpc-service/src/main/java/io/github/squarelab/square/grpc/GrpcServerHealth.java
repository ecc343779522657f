package io.github.squarelab.square.grpc;

import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.event.EventListener;
import org.springframework.grpc.server.lifecycle.GrpcServerShutdownEvent;
import org.springframework.grpc.server.lifecycle.GrpcServerStartedEvent;
import org.springframework.stereotype.Component;

/**
 * The service can serve only while its gRPC server listens: the actuator's HTTP port may start first, and then
 * /actuator/health would say UP while calls to the gRPC port were still refused. Spring Boot 4.1's health API and Spring
 * gRPC's events (square-grpc-service has Boot 3.5's and net.devh's).
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
