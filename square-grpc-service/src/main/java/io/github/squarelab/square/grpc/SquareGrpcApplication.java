package io.github.squarelab.square.grpc;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/** Answers the square of a number over gRPC: the gRPC downstream of the aggregator. */
@SpringBootApplication
public class SquareGrpcApplication {

    public static void main(String[] args) {
        SpringApplication.run(SquareGrpcApplication.class, args);
    }
}
