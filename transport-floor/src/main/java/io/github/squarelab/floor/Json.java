package io.github.squarelab.floor;

import java.math.BigDecimal;
import java.math.RoundingMode;

/**
 * Writes one JSON object, fields in the order they are added: enough for the client's result, with no
 * library on the path. Decimals are rounded to three places.
 */
public final class Json {

    private final StringBuilder text = new StringBuilder("{");

    public Json field(String name, String value) {
        return raw(name, quote(value));
    }

    public Json field(String name, long value) {
        return raw(name, Long.toString(value));
    }

    public Json field(String name, double value) {
        if (!Double.isFinite(value)) {
            return raw(name, "null");
        }
        return raw(name, BigDecimal.valueOf(value).setScale(3, RoundingMode.HALF_UP).stripTrailingZeros()
            .toPlainString());
    }

    public Json field(String name, Json object) {
        return raw(name, object.toString());
    }

    @Override
    public String toString() {
        return text + "}";
    }

    /** {@code value} as a JSON string: quoted, with quotes, backslashes and control characters escaped. */
    public static String quote(String value) {
        StringBuilder quoted = new StringBuilder(value.length() + 2).append('"');
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            switch (c) {
                case '"' -> quoted.append("\\\"");
                case '\\' -> quoted.append("\\\\");
                case '\n' -> quoted.append("\\n");
                case '\r' -> quoted.append("\\r");
                case '\t' -> quoted.append("\\t");
                default -> {
                    if (c < 0x20) {
                        quoted.append(String.format("\\u%04x", (int) c));
                    } else {
                        quoted.append(c);
                    }
                }
            }
        }
        return quoted.append('"').toString();
    }

    private Json raw(String name, String value) {
        if (text.length() > 1) {
            text.append(',');
        }
        text.append(quote(name)).append(':').append(value);
        return this;
    }
}
