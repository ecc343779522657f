package io.github.squarelab.square.rest;

/** A POST whose Content-Type is not JSON, or that has none: answered 415. */
class UnsupportedBodyTypeException extends RuntimeException {

    UnsupportedBodyTypeException(String contentType) {
        super(
                contentType == null
                        ? "Content-Type is missing: a payload is application/json"
                        : "Content-Type '" + contentType + "' is not supported: a payload is application/json",
                null,
                false,
                false);
    }
}
