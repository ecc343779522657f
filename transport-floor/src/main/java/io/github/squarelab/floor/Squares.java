package io.github.squarelab.floor;

/** What every server answers and every client checks, and which numbers the clients ask for. */
public final class Squares {

    /**
     * The clients ask for 1, 2, ... {@value}, then again from 1: the numbers the lab's default load
     * ({@code /path/1000}) has the aggregator ask for, so requests and answers are the same size.
     */
    public static final int LARGEST_NUMBER = 1000;

    private Squares() {}

    /** Widened before multiplying: squares above 2^31 must stay correct. */
    public static long square(int number) {
        return (long) number * number;
    }

    /** The number to ask for after {@code number}. */
    public static int next(int number) {
        return number % LARGEST_NUMBER + 1;
    }

    /** Where the {@code index}-th of several concurrent sequences starts, so that they do not all ask the same. */
    public static int first(int index) {
        return index % LARGEST_NUMBER + 1;
    }
}
