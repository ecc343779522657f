package io.github.squarelab.payload;

/** A shape's name that is none of the known ones; the message lists them. */
public class UnknownShapeException extends IllegalArgumentException {

    UnknownShapeException(String text) {
        super("payload must be one of " + Shape.knownNames() + "; got '" + text + "'");
    }
}
