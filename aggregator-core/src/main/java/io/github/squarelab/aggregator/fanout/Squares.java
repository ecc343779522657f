package io.github.squarelab.aggregator.fanout;

/**
 * The squares of 1..n, collected in order, and written as the contract's JSON:
 * {@code [{"1":1},{"2":4},{"3":9}]}, no whitespace.
 */
public final class Squares {

    private final long[] values;
    private int size;

    public Squares(int n) {
        this.values = new long[n];
    }

    /** Appends the square of the next number, {@code size() + 1}. */
    public void add(long square) {
        values[size++] = square;
    }

    public int size() {
        return size;
    }

    /** How many squares the fan-out asked for. */
    public int expected() {
        return values.length;
    }

    public boolean isComplete() {
        return size == values.length;
    }

    /** Written by hand: numbers only, so no escaping is needed, and it saves a Jackson tree per request. */
    public String toJson() {
        StringBuilder json = new StringBuilder(size * 24 + 2);
        json.append('[');
        for (int i = 0; i < size; i++) {
            if (i > 0) {
                json.append(',');
            }
            json.append("{\"").append(i + 1).append("\":").append(values[i]).append('}');
        }
        return json.append(']').toString();
    }
}
