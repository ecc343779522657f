package io.github.squarelab.square.rest;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * Answers the square of a number as JSON over HTTP/1.1 and HTTP/2 cleartext (prior knowledge) on one port, on Spring
 * Boot 4.1: the REST downstream of the aggregator. Its wiring is {@link WebServers} and {@link SquareServerEnvironment};
 * everything else is square-rest-core's.
 */
@SpringBootApplication
public class SquareRestApplication {

    public static void main(String[] args) {
        SpringApplication.run(SquareRestApplication.class, args);
    }
}
