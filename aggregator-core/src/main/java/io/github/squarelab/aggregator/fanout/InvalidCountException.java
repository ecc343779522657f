package io.github.squarelab.aggregator.fanout;

/** The {@code n} of a request is not a whole number from 0 to the configured maximum. */
public class InvalidCountException extends RuntimeException {

    InvalidCountException(String message) {
        super(message);
    }
}
