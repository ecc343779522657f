package io.github.squarelab.square.rest;

/** The path held something other than a 32-bit signed integer. */
class InvalidNumberException extends RuntimeException {

    InvalidNumberException(String text) {
        super("number must be a 32-bit signed integer (from -2147483648 to 2147483647), got '" + text + "'");
    }
}
