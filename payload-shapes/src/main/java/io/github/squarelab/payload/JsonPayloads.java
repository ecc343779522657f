package io.github.squarelab.payload;

import static io.github.squarelab.payload.ShapeValues.COLLECTION_ITEMS;
import static io.github.squarelab.payload.ShapeValues.DEEP_LEVELS;
import static io.github.squarelab.payload.ShapeValues.WIDE_CHILDREN;
import static io.github.squarelab.payload.ShapeValues.WIDE_LEAVES;

import java.util.Arrays;
import java.util.List;

/**
 * The JSON form of the shapes as records: {@link #of} builds a call's {@link PayloadJson}, and {@link #difference}
 * checks an echo against the values of a shape and number in place, with the same outcome as
 * {@code of(shape, k).equals(echo)}. Both run on every call, as in {@link ProtoPayloads}.
 */
public final class JsonPayloads {

    private JsonPayloads() {}

    /** The payload of a call of {@code shape} for the number {@code k}; {@link Shape#SMALL} carries none. */
    public static PayloadJson of(Shape shape, int k) {
        return switch (shape) {
            case SMALL -> throw new IllegalArgumentException("the shape small carries no payload");
            case WIDE -> new PayloadJson(wide(k), null, null);
            case DEEP -> new PayloadJson(null, deep(k), null);
            case COLLECTION -> new PayloadJson(null, null, collection(k));
        };
    }

    /**
     * Null when {@code echo} has exactly the values of {@code shape} for {@code k}, or else what differs first, e.g.
     * {@code collection[3].name 'item-7-4' where 'item-7-3' was sent}. Allocates nothing when the echo is right.
     */
    public static String difference(Shape shape, int k, PayloadJson echo) {
        if (!shape.hasPayload()) {
            throw new IllegalArgumentException("the shape small carries no payload");
        }
        String structure = echo.structureError();
        if (structure != null) {
            return structure;
        }
        if (echo.shape() != shape) {
            return "a " + echo.shape() + " payload where a " + shape + " payload was sent";
        }
        return switch (shape) {
            case WIDE -> wideDifference(k, echo.wide());
            case DEEP -> deepDifference(k, echo.deep());
            case COLLECTION -> collectionDifference(k, echo.collection());
            case SMALL -> throw new AssertionError();
        };
    }

    private static PayloadJson.Node wide(int k) {
        PayloadJson.Node[] middles = new PayloadJson.Node[WIDE_CHILDREN];
        for (int child = 0; child < WIDE_CHILDREN; child++) {
            PayloadJson.Node[] leaves = new PayloadJson.Node[WIDE_LEAVES];
            for (int leaf = 0; leaf < WIDE_LEAVES; leaf++) {
                leaves[leaf] = node(k, ShapeValues.wideLeaf(child, leaf), null);
            }
            middles[child] = node(k, ShapeValues.wideChild(child), Arrays.asList(leaves));
        }
        return node(k, 0, Arrays.asList(middles));
    }

    private static PayloadJson.Node node(int k, int i, List<PayloadJson.Node> children) {
        return new PayloadJson.Node(
                ShapeValues.id(i), ShapeValues.name(k, i), ShapeValues.count(k, i), ShapeValues.value(k, i), children);
    }

    private static PayloadJson.Level deep(int k) {
        PayloadJson.Level inner = null;
        for (int i = DEEP_LEVELS - 1; i >= 0; i--) {
            inner = new PayloadJson.Level(
                    ShapeValues.id(i), ShapeValues.name(k, i), ShapeValues.count(k, i), ShapeValues.value(k, i), inner);
        }
        return inner;
    }

    private static List<PayloadJson.Item> collection(int k) {
        PayloadJson.Item[] items = new PayloadJson.Item[COLLECTION_ITEMS];
        for (int i = 0; i < COLLECTION_ITEMS; i++) {
            items[i] = new PayloadJson.Item(
                    ShapeValues.id(i), ShapeValues.name(k, i), ShapeValues.count(k, i), ShapeValues.value(k, i));
        }
        return Arrays.asList(items);
    }

    private static String wideDifference(int k, PayloadJson.Node root) {
        String wrong = nodeDifference(k, 0, root);
        if (wrong != null) {
            return "wide." + wrong;
        }
        for (int child = 0; child < WIDE_CHILDREN; child++) {
            PayloadJson.Node middle = root.children().get(child);
            wrong = nodeDifference(k, ShapeValues.wideChild(child), middle);
            if (wrong != null) {
                return "wide.children[" + child + "]." + wrong;
            }
            for (int leaf = 0; leaf < WIDE_LEAVES; leaf++) {
                wrong = nodeDifference(
                        k, ShapeValues.wideLeaf(child, leaf), middle.children().get(leaf));
                if (wrong != null) {
                    return "wide.children[" + child + "].children[" + leaf + "]." + wrong;
                }
            }
        }
        return null;
    }

    private static String nodeDifference(int k, int i, PayloadJson.Node node) {
        return ObjectDifference.of(k, i, node.id(), node.name(), node.count(), node.value());
    }

    private static String deepDifference(int k, PayloadJson.Level top) {
        PayloadJson.Level level = top;
        for (int i = 0; i < DEEP_LEVELS; i++) {
            String wrong = ObjectDifference.of(k, i, level.id(), level.name(), level.count(), level.value());
            if (wrong != null) {
                return (i == 0 ? "deep." : "deep level " + i + ".") + wrong;
            }
            level = level.next();
        }
        return null;
    }

    private static String collectionDifference(int k, List<PayloadJson.Item> items) {
        for (int i = 0; i < COLLECTION_ITEMS; i++) {
            PayloadJson.Item item = items.get(i);
            String wrong = ObjectDifference.of(k, i, item.id(), item.name(), item.count(), item.value());
            if (wrong != null) {
                return "collection[" + i + "]." + wrong;
            }
        }
        return null;
    }
}
