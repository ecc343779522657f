package io.github.squarelab.payload;

/**
 * The values of the object at position {@code i} (pre-order, depth or index) of any shape for number {@code k}: id i,
 * name item-k-i, count k + i (int, wrapping) and value k + i / 4.0, exact in binary, so echoes compare exactly.
 */
public final class ShapeValues {

    /** id, name, count, value. */
    public static final int VALUES_PER_OBJECT = 4;

    /** wide: the root's children. */
    public static final int WIDE_CHILDREN = 6;
    /** wide: the children of each of the root's children; these are the leaves. */
    public static final int WIDE_LEAVES = 9;
    /** wide: 1 + 6 + 6 x 9 = 61 objects. */
    public static final int WIDE_NODES = 1 + WIDE_CHILDREN + WIDE_CHILDREN * WIDE_LEAVES;
    /** deep: the levels. */
    public static final int DEEP_LEVELS = 8;
    /** collection: the items. */
    public static final int COLLECTION_ITEMS = 100;

    private static final String NAME_PREFIX = "item-";

    private ShapeValues() {}

    /** wide: the pre-order position of the root's child {@code child} (0 to 5). */
    public static int wideChild(int child) {
        return 1 + child * (1 + WIDE_LEAVES);
    }

    /** wide: the pre-order position of the leaf {@code leaf} (0 to 8) of the root's child {@code child}. */
    public static int wideLeaf(int child, int leaf) {
        return wideChild(child) + 1 + leaf;
    }

    /** How many objects a call of this shape carries: 0 for small. */
    public static int objects(Shape shape) {
        return switch (shape) {
            case SMALL -> 0;
            case WIDE -> WIDE_NODES;
            case DEEP -> DEEP_LEVELS;
            case COLLECTION -> COLLECTION_ITEMS;
        };
    }

    public static int id(int i) {
        return i;
    }

    public static String name(int k, int i) {
        return NAME_PREFIX + k + "-" + i;
    }

    public static int count(int k, int i) {
        return k + i;
    }

    public static double value(int k, int i) {
        return k + i / 4.0;
    }

    /** Whether {@code name} is {@link #name(int, int)} of k and i, without building that string. */
    public static boolean isName(String name, int k, int i) {
        if (name == null || !name.startsWith(NAME_PREFIX)) {
            return false;
        }
        int end = matchInt(name, NAME_PREFIX.length(), k);
        if (end < 0 || end >= name.length() || name.charAt(end) != '-') {
            return false;
        }
        return matchInt(name, end + 1, i) == name.length();
    }

    /** "1 child", "0 children", "9 children": for messages. */
    static String counted(int count, String one, String many) {
        return count + " " + (count == 1 ? one : many);
    }

    /** Whether two doubles are the same value as protobuf's and a record's equals see it (bit for bit). */
    public static boolean sameValue(double actual, double expected) {
        return Double.doubleToLongBits(actual) == Double.doubleToLongBits(expected);
    }

    /**
     * Matches the decimal form of {@code number} (as Integer.toString writes it) at {@code from}; returns where it
     * ends, or -1 if the text there is something else.
     */
    private static int matchInt(String text, int from, int number) {
        int at = from;
        long rest = number;
        if (rest < 0) {
            if (at >= text.length() || text.charAt(at) != '-') {
                return -1;
            }
            at++;
            rest = -rest;
        }
        long scale = 1;
        while (scale * 10 <= rest) {
            scale *= 10;
        }
        for (; scale > 0; scale /= 10) {
            if (at >= text.length() || text.charAt(at) != (char) ('0' + (rest / scale) % 10)) {
                return -1;
            }
            at++;
        }
        return at;
    }
}
