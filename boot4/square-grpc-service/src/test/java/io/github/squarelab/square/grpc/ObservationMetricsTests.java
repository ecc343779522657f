package io.github.squarelab.square.grpc;

import org.springframework.boot.micrometer.metrics.test.autoconfigure.AutoConfigureMetrics;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;

/**
 * The contract's gRPC and HTTP metric pins on Spring Boot 4.1 and Spring gRPC, served in process (Spring gRPC serves a
 * network port beside it: any free one).
 */
@SpringBootTest(
        webEnvironment = WebEnvironment.RANDOM_PORT,
        properties = {
            "spring.grpc.server.port=0",
            "spring.grpc.server.inprocess.name=" + ObservationMetricsContract.IN_PROCESS,
            // A user's own exclude, which must not bring back a metering layer.
            "spring.autoconfigure.exclude=org.springframework.boot.autoconfigure.context.MessageSourceAutoConfiguration"
        })
@AutoConfigureMetrics
class ObservationMetricsTests extends ObservationMetricsContract {}
