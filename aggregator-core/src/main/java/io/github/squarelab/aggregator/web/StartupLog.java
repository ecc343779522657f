package io.github.squarelab.aggregator.web;

import io.github.squarelab.aggregator.AggregatorProperties;
import io.github.squarelab.aggregator.tls.ClientTls;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.stereotype.Component;

/**
 * One line that says where to reach the aggregator, and where it sends its calls, once its web server listens: each
 * Spring Boot generation's {@code WebServerWiring} hears that event (whose class each generation keeps elsewhere).
 */
@Component
public class StartupLog {

    private static final Logger log = LoggerFactory.getLogger(StartupLog.class);

    private final AggregatorProperties properties;
    private final ClientTls clientTls;

    StartupLog(AggregatorProperties properties, ClientTls clientTls) {
        this.properties = properties;
        this.clientTls = clientTls;
    }

    public void listening(int port) {
        log.info(
                "aggregator-service listening: GET http://localhost:{}/{rest/unary,rest/h2c,grpc/unary,grpc/pingpong,grpc/stream}/{n}"
                        + "[?payload=small|wide|deep|collection]"
                        + " -> REST square service {} (rest/unary through {}, rest/h2c through {}), gRPC square service {}"
                        + " (round robin over replicas); {} calls in flight per request,"
                        + " n up to {}, deadline {} ms per request and {} ms per call; to the square services {}",
                port,
                properties.rest().baseUrl().stream().map(Object::toString).collect(Collectors.joining(",")),
                properties.rest().client(),
                properties.rest().h2cClient(),
                properties.grpc().target(),
                properties.inFlight(),
                properties.maxN(),
                properties.deadline().toMillis(),
                properties.callDeadline().toMillis(),
                !clientTls.enabled()
                        ? "in plaintext"
                        : (clientTls.mutual() ? "over mutual TLS" : "over TLS") + " (SSL bundle "
                                + clientTls.info().get("bundle") + ")");
    }
}
