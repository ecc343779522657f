package io.github.squarelab.square.grpc;

import org.springframework.boot.test.autoconfigure.actuate.observability.AutoConfigureObservability;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;

/** The packaged configuration on Spring Boot 3.5: net.devh serves in process only (port -1). */
@SpringBootTest(
        webEnvironment = WebEnvironment.RANDOM_PORT,
        properties = {"grpc.server.port=-1", "grpc.server.in-process-name=" + SquareGrpcIntegrationContract.IN_PROCESS})
@AutoConfigureObservability
class SquareGrpcIntegrationTests extends SquareGrpcIntegrationContract {

    @Override
    protected int configuredPort() {
        return -1;
    }
}
