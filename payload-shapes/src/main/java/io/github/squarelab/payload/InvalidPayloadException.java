package io.github.squarelab.payload;

/** JSON that is not exactly a payload of a known shape (or an answer carrying one); the message says what, and where. */
public class InvalidPayloadException extends Exception {

    InvalidPayloadException(String message) {
        // Thrown for every bad request body: no stack trace to fill in.
        super(message, null, false, false);
    }
}
