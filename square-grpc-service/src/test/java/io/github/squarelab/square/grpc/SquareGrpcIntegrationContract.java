package io.github.squarelab.square.grpc;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.squarelab.observation.LocalHttp;
import io.github.squarelab.proto.Input;
import io.github.squarelab.proto.SquareRpcGrpc;
import io.grpc.ManagedChannel;
import io.grpc.inprocess.InProcessChannelBuilder;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.web.server.LocalServerPort;

/**
 * The packaged configuration: the generation's gRPC starter serves the service (in-process here as {@link #IN_PROCESS},
 * so no fixed port is taken), and the actuator reports health and the grpc_server_* metrics. Each Spring generation's
 * SquareGrpcIntegrationTests runs these with its starter's properties.
 */
public abstract class SquareGrpcIntegrationContract {

    protected static final String IN_PROCESS = "square-grpc-integration";

    private final ManagedChannel channel =
            InProcessChannelBuilder.forName(IN_PROCESS).build();

    @LocalServerPort
    private int port;

    /** The port /actuator/info names: the one the generation's subclass configures (none of its own, in process). */
    protected abstract int configuredPort();

    @AfterEach
    void closeChannel() throws Exception {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }

    @Test
    void servesSquareRpcAndRecordsGrpcServerMetrics() {
        long result = SquareRpcGrpc.newBlockingStub(channel)
                .withDeadlineAfter(5, TimeUnit.SECONDS)
                .findSquareUnary(Input.newBuilder().setNumber(65536).build())
                .getResult();
        assertThat(result).isEqualTo(4294967296L);

        String metrics = http().get("/actuator/prometheus");
        assertThat(metrics)
                .containsPattern("grpc_server_processing_duration_seconds_bucket\\{[^}]*method=\"findSquareUnary\"")
                .containsPattern("grpc_server_requests_received_messages_total\\{[^}]*service=\"vinsmath.SquareRpc\"")
                // The families Micrometer's gRPC observation gave, now recorded by the one metering layer, are part
                // of the contract too (outside scrapers may use them), although the lab and the dashboard do not.
                .containsPattern("grpc_server_seconds_count\\{[^}]*rpc_method=\"findSquareUnary\"")
                .containsPattern("grpc_server_received_total\\{")
                .containsPattern("grpc_server_sent_total\\{");
    }

    @Test
    void healthIsUpAndOnlyThePromisedEndpointsAreExposed() {
        assertThat(http().get("/actuator/health")).isEqualTo("{\"status\":\"UP\"}");
        assertThat(http().exchange("/actuator/info").statusCode()).isEqualTo(200);
        assertThat(http().exchange("/actuator/env").statusCode()).isEqualTo(404);
    }

    /** What net.devh's metric auto-configuration showed in /actuator/info, kept without it on both generations. */
    @Test
    void theInfoEndpointNamesTheServersServicesAndTheirMethods() {
        assertThat(http().get("/actuator/info"))
                .contains("\"grpc.server\":{\"port\":" + configuredPort()
                        + ",\"services\":{\"grpc.health.v1.Health\":[\"Check\",\"Watch\"],"
                        + "\"grpc.reflection.v1alpha.ServerReflection\":[\"ServerReflectionInfo\"],"
                        + "\"vinsmath.SquareRpc\":[\"findSquareBiStream\",\"findSquareUnary\"]}}");
    }

    private LocalHttp http() {
        return LocalHttp.on(port);
    }
}
