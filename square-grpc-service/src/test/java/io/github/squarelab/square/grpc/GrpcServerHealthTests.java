package io.github.squarelab.square.grpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.mockito.Mockito.mock;

import io.grpc.Server;
import net.devh.boot.grpc.server.event.GrpcServerShutdownEvent;
import net.devh.boot.grpc.server.event.GrpcServerStartedEvent;
import net.devh.boot.grpc.server.serverfactory.GrpcServerLifecycle;
import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.health.Status;

class GrpcServerHealthTests {

    private final GrpcServerLifecycle lifecycle = mock(GrpcServerLifecycle.class);
    private final Server server = mock(Server.class);
    private final GrpcServerHealth health = new GrpcServerHealth();

    @Test
    void downUntilTheGrpcServerListensUpWhileItDoesAndDownOnceItShutsDown() {
        assertThat(health.health().getStatus()).isEqualTo(Status.DOWN);
        assertThat(health.health().getDetails()).containsEntry("grpc", "not listening");

        health.onStarted(new GrpcServerStartedEvent(lifecycle, server, "127.0.0.1", 6565));
        assertThat(health.health().getStatus()).isEqualTo(Status.UP);

        health.onShutdown(new GrpcServerShutdownEvent(lifecycle, server));
        assertThat(health.health().getStatus()).isEqualTo(Status.DOWN);
    }
}
