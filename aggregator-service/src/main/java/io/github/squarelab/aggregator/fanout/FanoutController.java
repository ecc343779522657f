package io.github.squarelab.aggregator.fanout;

import io.github.squarelab.aggregator.AggregatorProperties;
import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

/**
 * The five fan-out paths. Each returns a Mono: Spring MVC releases the Tomcat thread while the
 * fan-out runs and writes the answer when it completes.
 */
@RestController
class FanoutController {

    private final FanoutService fanout;
    private final int maxN;

    FanoutController(FanoutService fanout, AggregatorProperties properties) {
        this.fanout = fanout;
        this.maxN = properties.maxN();
    }

    @GetMapping(path = "/rest/unary/{n}", produces = MediaType.APPLICATION_JSON_VALUE)
    Mono<String> restUnary(@PathVariable String n) {
        return fanout.fanOut(Transport.REST_UNARY, RequestedCount.parse(n, maxN));
    }

    @GetMapping(path = "/rest/h2c/{n}", produces = MediaType.APPLICATION_JSON_VALUE)
    Mono<String> restH2c(@PathVariable String n) {
        return fanout.fanOut(Transport.REST_H2C, RequestedCount.parse(n, maxN));
    }

    @GetMapping(path = "/grpc/pingpong/{n}", produces = MediaType.APPLICATION_JSON_VALUE)
    Mono<String> grpcPingPong(@PathVariable String n) {
        return fanout.fanOut(Transport.GRPC_PINGPONG, RequestedCount.parse(n, maxN));
    }

    @GetMapping(path = "/grpc/unary/{n}", produces = MediaType.APPLICATION_JSON_VALUE)
    Mono<String> grpcUnary(@PathVariable String n) {
        return fanout.fanOut(Transport.GRPC_UNARY, RequestedCount.parse(n, maxN));
    }

    @GetMapping(path = "/grpc/stream/{n}", produces = MediaType.APPLICATION_JSON_VALUE)
    Mono<String> grpcStream(@PathVariable String n) {
        return fanout.fanOut(Transport.GRPC_STREAM, RequestedCount.parse(n, maxN));
    }
}
