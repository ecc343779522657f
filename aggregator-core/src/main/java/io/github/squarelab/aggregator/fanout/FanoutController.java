package io.github.squarelab.aggregator.fanout;

import io.github.squarelab.aggregator.AggregatorProperties;
import io.github.squarelab.payload.Shape;
import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

/**
 * The five fan-out paths. Each returns a Mono: Spring MVC releases the Tomcat thread while the
 * fan-out runs and writes the answer when it completes. Each takes {@code ?payload=small|wide|deep|collection}
 * (default small): the shape every downstream call or message carries; another name is a 400 problem listing them.
 */
@RestController
class FanoutController {

    /** The query parameter that names the payload shape. */
    static final String PAYLOAD = "payload";

    private final FanoutService fanout;
    private final int maxN;

    FanoutController(FanoutService fanout, AggregatorProperties properties) {
        this.fanout = fanout;
        this.maxN = properties.maxN();
    }

    @GetMapping(path = "/rest/unary/{n}", produces = MediaType.APPLICATION_JSON_VALUE)
    Mono<String> restUnary(@PathVariable String n, @RequestParam(name = PAYLOAD, required = false) String payload) {
        return fanout.fanOut(Transport.REST_UNARY, RequestedCount.parse(n, maxN), Shape.parse(payload));
    }

    @GetMapping(path = "/rest/h2c/{n}", produces = MediaType.APPLICATION_JSON_VALUE)
    Mono<String> restH2c(@PathVariable String n, @RequestParam(name = PAYLOAD, required = false) String payload) {
        return fanout.fanOut(Transport.REST_H2C, RequestedCount.parse(n, maxN), Shape.parse(payload));
    }

    @GetMapping(path = "/grpc/pingpong/{n}", produces = MediaType.APPLICATION_JSON_VALUE)
    Mono<String> grpcPingPong(@PathVariable String n, @RequestParam(name = PAYLOAD, required = false) String payload) {
        return fanout.fanOut(Transport.GRPC_PINGPONG, RequestedCount.parse(n, maxN), Shape.parse(payload));
    }

    @GetMapping(path = "/grpc/unary/{n}", produces = MediaType.APPLICATION_JSON_VALUE)
    Mono<String> grpcUnary(@PathVariable String n, @RequestParam(name = PAYLOAD, required = false) String payload) {
        return fanout.fanOut(Transport.GRPC_UNARY, RequestedCount.parse(n, maxN), Shape.parse(payload));
    }

    @GetMapping(path = "/grpc/stream/{n}", produces = MediaType.APPLICATION_JSON_VALUE)
    Mono<String> grpcStream(@PathVariable String n, @RequestParam(name = PAYLOAD, required = false) String payload) {
        return fanout.fanOut(Transport.GRPC_STREAM, RequestedCount.parse(n, maxN), Shape.parse(payload));
    }
}
