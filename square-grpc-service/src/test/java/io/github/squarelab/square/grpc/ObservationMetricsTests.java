package io.github.squarelab.square.grpc;

import org.springframework.boot.test.autoconfigure.actuate.observability.AutoConfigureObservability;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;

/** The contract's gRPC and HTTP metric pins on Spring Boot 3.5 and net.devh, served in process. */
@SpringBootTest(
        webEnvironment = WebEnvironment.RANDOM_PORT,
        properties = {
            "grpc.server.port=-1",
            "grpc.server.in-process-name=" + ObservationMetricsContract.IN_PROCESS,
            // A user's own exclude, which must not bring back the metering layers the application excludes.
            "spring.autoconfigure.exclude=org.springframework.boot.autoconfigure.gson.GsonAutoConfiguration"
        })
@AutoConfigureObservability
class ObservationMetricsTests extends ObservationMetricsContract {}
