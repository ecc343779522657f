package io.github.squarelab.floor;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** {@code --name value} options, each from a known set and given at most once. */
final class Arguments {

    private static final Pattern DURATION = Pattern.compile("(\\d+(?:\\.\\d+)?)(ms|s|m)?");

    private final Map<String, String> values;

    private Arguments(Map<String, String> values) {
        this.values = values;
    }

    static Arguments parse(List<String> args, Set<String> known) {
        Map<String, String> values = new HashMap<>();
        for (int i = 0; i < args.size(); i += 2) {
            String option = args.get(i);
            String name = option.startsWith("--") ? option.substring(2) : "";
            if (!known.contains(name)) {
                throw new IllegalArgumentException("unknown option " + option);
            }
            if (i + 1 >= args.size()) {
                throw new IllegalArgumentException(option + " needs a value");
            }
            if (values.put(name, args.get(i + 1)) != null) {
                throw new IllegalArgumentException(option + " given twice");
            }
        }
        return new Arguments(values);
    }

    String text(String name, String otherwise) {
        return values.getOrDefault(name, otherwise);
    }

    String required(String name) {
        String value = values.get(name);
        if (value == null) {
            throw new IllegalArgumentException("--" + name + " is required");
        }
        return value;
    }

    int integer(String name, int otherwise) {
        String value = values.get(name);
        if (value == null) {
            return otherwise;
        }
        try {
            return Integer.parseInt(value);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--" + name + " must be a whole number, not " + value);
        }
    }

    Duration duration(String name, Duration otherwise) {
        String value = values.get(name);
        return value == null ? otherwise : parseDuration("--" + name, value);
    }

    /** {@code 500ms}, {@code 3s}, {@code 1.5s}, {@code 2m}; a bare number is seconds. */
    static Duration parseDuration(String what, String text) {
        Matcher matcher = DURATION.matcher(text.strip());
        if (!matcher.matches()) {
            throw new IllegalArgumentException(what + " must be a duration such as 500ms, 3s or 1m, not " + text);
        }
        double amount = Double.parseDouble(matcher.group(1));
        String unit = matcher.group(2) == null ? "s" : matcher.group(2);
        double nanosPerUnit = switch (unit) {
            case "ms" -> 1e6;
            case "m" -> 60e9;
            default -> 1e9;
        };
        return Duration.ofNanos(Math.round(amount * nanosPerUnit));
    }
}
