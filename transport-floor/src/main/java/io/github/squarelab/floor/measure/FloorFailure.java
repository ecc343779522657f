package io.github.squarelab.floor.measure;

/** The run cannot give a floor: a wrong answer, a failed call, a server that cannot be reached. */
public class FloorFailure extends Exception {

    public FloorFailure(String message) {
        super(message);
    }

    public FloorFailure(String message, Throwable cause) {
        super(message, cause);
    }
}
