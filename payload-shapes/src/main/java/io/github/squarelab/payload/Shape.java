package io.github.squarelab.payload;

import java.util.Locale;

/**
 * What one call carries besides its number. {@link #SMALL} is the article's call, with no payload at all; the
 * others carry one object tree whose values derive from the number ({@link ShapeValues}), so that its echo can be
 * checked.
 */
public enum Shape {
    /** Nothing besides the number: the article's call, unchanged. */
    SMALL,
    /** A root with 6 children, each with 9 leaf children: 61 objects, 244 values. */
    WIDE,
    /** 8 levels, each nested in the one before: 32 values. */
    DEEP,
    /** A list of 100 objects: 400 values. */
    COLLECTION;

    private static final Shape[] ALL = values();
    private static final String KNOWN = "small, wide, deep, collection";

    private final String wireName = name().toLowerCase(Locale.ROOT);

    /** The name in URLs and JSON: {@code small}, {@code wide}, {@code deep}, {@code collection}. */
    public String wireName() {
        return wireName;
    }

    /** False only for {@link #SMALL}, whose calls carry no payload. */
    public boolean hasPayload() {
        return this != SMALL;
    }

    /** Every shape's name, comma-separated, for messages that list them. */
    public static String knownNames() {
        return KNOWN;
    }

    /**
     * The shape named {@code text}, exactly as {@link #wireName()} spells it; null means the default, {@link #SMALL}.
     *
     * @throws UnknownShapeException for anything else, the empty text included, with a message listing the shapes
     */
    public static Shape parse(String text) {
        if (text == null) {
            return SMALL;
        }
        for (Shape shape : ALL) {
            if (shape.wireName.equals(text)) {
                return shape;
            }
        }
        throw new UnknownShapeException(text);
    }

    @Override
    public String toString() {
        return wireName;
    }
}
