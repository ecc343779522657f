package io.github.squarelab.floor;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.time.Duration;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** {@code --name value} options, each given at most once, and each given one read by what it configures. */
final class Arguments {

    private final Map<String, String> values;
    private final Set<String> read = new HashSet<>();

    private Arguments(Map<String, String> values) {
        this.values = values;
    }

    static Arguments parse(List<String> args) {
        Map<String, String> values = new LinkedHashMap<>();
        for (int i = 0; i < args.size(); i += 2) {
            String option = args.get(i);
            if (!option.startsWith("--")) {
                throw new IllegalArgumentException("expected an option such as --target, not " + option);
            }
            if (i + 1 >= args.size()) {
                throw new IllegalArgumentException(option + " needs a value");
            }
            if (values.put(option.substring(2), args.get(i + 1)) != null) {
                throw new IllegalArgumentException(option + " given twice");
            }
        }
        return new Arguments(values);
    }

    String text(String name, String otherwise) {
        read.add(name);
        return values.getOrDefault(name, otherwise);
    }

    int integer(String name, int otherwise) {
        String value = text(name, null);
        return value == null ? otherwise : wholeNumber(name, value);
    }

    String required(String name) {
        String value = text(name, null);
        if (value == null) {
            throw new IllegalArgumentException("--" + name + " is required");
        }
        return value;
    }

    /** A required whole number of at least 1. */
    int count(String name) {
        int count = wholeNumber(name, required(name));
        if (count < 1) {
            throw new IllegalArgumentException("--" + name + " must be at least 1, not " + count);
        }
        return count;
    }

    /** Required, in seconds as a decimal number: {@code 10}, {@code 0.5}. */
    Duration seconds(String name) {
        String value = required(name);
        try {
            BigDecimal seconds = new BigDecimal(value);
            if (seconds.signum() < 0) {
                throw new NumberFormatException();
            }
            return Duration.ofNanos(
                    seconds.movePointRight(9).setScale(0, RoundingMode.HALF_UP).longValueExact());
        } catch (NumberFormatException | ArithmeticException e) {
            throw new IllegalArgumentException("--" + name + " must be seconds, such as 10 or 0.5, not " + value);
        }
    }

    /** Fails on the first option given that nothing read: one that {@code what} does not take. */
    void requireAllRead(String what) {
        for (String name : values.keySet()) {
            if (!read.contains(name)) {
                throw new IllegalArgumentException(what + " takes no --" + name);
            }
        }
    }

    private static int wholeNumber(String name, String value) {
        try {
            return Integer.parseInt(value);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--" + name + " must be a whole number, not " + value);
        }
    }
}
