package io.github.squarelab.square.rest;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/** Answers the square of a number over HTTP/1.1 JSON: the REST downstream of the aggregator. */
@SpringBootApplication
public class SquareRestApplication {

    public static void main(String[] args) {
        SpringApplication.run(SquareRestApplication.class, args);
    }
}
