package io.github.squarelab.square.grpc;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * Answers the square of a number over gRPC, on Spring Boot 4.1 and Spring gRPC: the gRPC downstream of the aggregator.
 * Spring gRPC stacks no metering layer of its own besides Micrometer's observation, which application.yml turns off
 * (spring.grpc.server.observation.enabled) for the one metering layer (GrpcServerWiring).
 */
@SpringBootApplication
public class SquareGrpcApplication {

    public static void main(String[] args) {
        SpringApplication.run(SquareGrpcApplication.class, args);
    }
}
