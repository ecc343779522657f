package io.github.squarelab.aggregator;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.ConfigurationPropertiesScan;

/**
 * Fans a request for n squares out to a square service over REST (HTTP/1.1 or HTTP/2 cleartext), gRPC unary, or a gRPC
 * bidi stream (pipelined or ping-pong): on Spring Boot 4.1, whose wiring is {@link WebServerWiring} and
 * {@link GrpcChannelWiring}; everything else is aggregator-core's.
 */
@SpringBootApplication
@ConfigurationPropertiesScan
public class AggregatorApplication {

    public static void main(String[] args) {
        SpringApplication.run(AggregatorApplication.class, args);
    }
}
