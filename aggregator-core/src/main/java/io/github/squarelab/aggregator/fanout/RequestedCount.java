package io.github.squarelab.aggregator.fanout;

/** Reads the {@code n} of a request from its path, with an error that says exactly what was wrong. */
final class RequestedCount {

    /** Long enough to hold any number we could accept; longer text is refused before parsing. */
    private static final int MAX_DIGITS = 10;

    private RequestedCount() {}

    static int parse(String text, int maxN) {
        if (text.isEmpty() || !text.chars().allMatch(c -> c >= '0' && c <= '9')) {
            throw new InvalidCountException("n must be a non-negative integer, got '" + text + "'");
        }
        String digits = text.replaceFirst("^0+(?=.)", "");
        if (digits.length() > MAX_DIGITS || Long.parseLong(digits) > maxN) {
            throw new InvalidCountException("n must be at most " + maxN + " (aggregator.max-n), got " + text);
        }
        return Integer.parseInt(digits);
    }
}
