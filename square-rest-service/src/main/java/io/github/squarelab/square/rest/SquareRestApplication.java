package io.github.squarelab.square.rest;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * Answers the square of a number as JSON over HTTP/1.1 and HTTP/2 cleartext (prior knowledge) on one port:
 * the REST downstream of the aggregator.
 */
@SpringBootApplication
public class SquareRestApplication {

    public static void main(String[] args) {
        SpringApplication.run(SquareRestApplication.class, args);
    }
}
