package io.github.squarelab.square.grpc;

import net.devh.boot.grpc.server.autoconfigure.GrpcServerMetricAutoConfiguration;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * Answers the square of a number over gRPC: the gRPC downstream of the aggregator.
 *
 * <p>Without net.devh's metric auto-configuration: the service's one metering layer (metering package) records its
 * MetricCollecting interceptor's and A66 stream tracer's metrics, and GrpcServerInfo keeps its info. Excluded here,
 * not in application.yml, so that no other exclude a user sets can bring those layers back on top of it.
 */
@SpringBootApplication(exclude = GrpcServerMetricAutoConfiguration.class)
public class SquareGrpcApplication {

    public static void main(String[] args) {
        SpringApplication.run(SquareGrpcApplication.class, args);
    }
}
