package io.github.squarelab.aggregator.grpc;

import io.github.squarelab.aggregator.AggregatorProperties;
import java.net.URI;
import java.time.Duration;
import java.util.List;

/**
 * The aggregator's properties for tests of its gRPC channel (a gRPC target, and a REST side that is never called), or
 * of its Tomcat connector (a connection limit).
 */
public final class GrpcOnlyProperties {

    private GrpcOnlyProperties() {}

    static AggregatorProperties to(String target, Duration deadline) {
        return to(target, deadline, 0);
    }

    public static AggregatorProperties to(String target, Duration deadline, long maxConnections) {
        return new AggregatorProperties(
                100_000,
                8,
                deadline,
                deadline,
                new AggregatorProperties.Rest(
                        List.of(URI.create("http://unused:1")), 1, 1, "reactor-netty", "reactor-netty"),
                new AggregatorProperties.Grpc(target),
                new AggregatorProperties.Admission(0, 0, maxConnections, deadline, Duration.ofMillis(500), 0.5));
    }
}
