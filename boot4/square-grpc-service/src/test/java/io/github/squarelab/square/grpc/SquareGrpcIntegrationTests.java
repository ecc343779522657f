package io.github.squarelab.square.grpc;

import org.springframework.boot.micrometer.metrics.test.autoconfigure.AutoConfigureMetrics;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;

/** The packaged configuration on Spring Boot 4.1: Spring gRPC serves in process, and on any free port beside it. */
@SpringBootTest(
        webEnvironment = WebEnvironment.RANDOM_PORT,
        properties = {
            "spring.grpc.server.port=0",
            "spring.grpc.server.inprocess.name=" + SquareGrpcIntegrationContract.IN_PROCESS
        })
@AutoConfigureMetrics
class SquareGrpcIntegrationTests extends SquareGrpcIntegrationContract {

    @Override
    protected int configuredPort() {
        return 0;
    }
}
