package io.github.squarelab.payload;

import static io.github.squarelab.payload.ShapeValues.COLLECTION_ITEMS;
import static io.github.squarelab.payload.ShapeValues.DEEP_LEVELS;
import static io.github.squarelab.payload.ShapeValues.WIDE_CHILDREN;
import static io.github.squarelab.payload.ShapeValues.WIDE_LEAVES;

import com.google.protobuf.MessageOrBuilder;
import io.github.squarelab.proto.Item;
import io.github.squarelab.proto.Items;
import io.github.squarelab.proto.Level;
import io.github.squarelab.proto.Node;
import io.github.squarelab.proto.Payload;

/**
 * The protobuf form of the shapes: {@link #of} builds a call's {@link Payload}, and {@link #difference} checks an
 * echo against the values of a shape and number in place, without building a second payload to compare with,
 * with the same outcome as {@code of(shape, k).equals(echo)}. Both run on every call: a payload is built anew for
 * each, as a real service would, and nothing is cached across calls.
 */
public final class ProtoPayloads {

    private ProtoPayloads() {}

    /** The payload of a call of {@code shape} for the number {@code k}; {@link Shape#SMALL} carries none. */
    public static Payload of(Shape shape, int k) {
        return switch (shape) {
            case SMALL -> throw new IllegalArgumentException("the shape small carries no payload");
            case WIDE -> Payload.newBuilder().setWide(wide(k)).build();
            case DEEP -> Payload.newBuilder().setDeep(deep(k)).build();
            case COLLECTION -> Payload.newBuilder().setCollection(collection(k)).build();
        };
    }

    /**
     * Null when {@code echo} is exactly the payload of {@code shape} for {@code k} (field for field, unknown fields
     * included, as protobuf's equals compares), or else what differs first, e.g. {@code collection[3].name
     * 'item-7-4' where 'item-7-3' was sent}. Allocates nothing when the echo is right.
     */
    public static String difference(Shape shape, int k, Payload echo) {
        if (!shape.hasPayload()) {
            throw new IllegalArgumentException("the shape small carries no payload");
        }
        if (hasUnknownFields(echo)) {
            return "fields the payload sent does not have";
        }
        Payload.ShapeCase sent = shapeCase(shape);
        if (echo.getShapeCase() != sent) {
            return echo.getShapeCase() == Payload.ShapeCase.SHAPE_NOT_SET
                    ? "an empty payload where a " + shape + " payload was sent"
                    : "a " + echo.getShapeCase().name().toLowerCase(java.util.Locale.ROOT) + " payload where a " + shape
                            + " payload was sent";
        }
        return switch (shape) {
            case WIDE -> wideDifference(k, echo.getWide());
            case DEEP -> deepDifference(k, echo.getDeep());
            case COLLECTION -> collectionDifference(k, echo.getCollection());
            case SMALL -> throw new AssertionError();
        };
    }

    private static Payload.ShapeCase shapeCase(Shape shape) {
        return switch (shape) {
            case WIDE -> Payload.ShapeCase.WIDE;
            case DEEP -> Payload.ShapeCase.DEEP;
            case COLLECTION -> Payload.ShapeCase.COLLECTION;
            case SMALL -> Payload.ShapeCase.SHAPE_NOT_SET;
        };
    }

    private static Node wide(int k) {
        Node.Builder root = node(k, 0);
        for (int child = 0; child < WIDE_CHILDREN; child++) {
            Node.Builder middle = node(k, ShapeValues.wideChild(child));
            for (int leaf = 0; leaf < WIDE_LEAVES; leaf++) {
                middle.addChildren(node(k, ShapeValues.wideLeaf(child, leaf)));
            }
            root.addChildren(middle);
        }
        return root.build();
    }

    private static Node.Builder node(int k, int i) {
        return Node.newBuilder()
                .setId(ShapeValues.id(i))
                .setName(ShapeValues.name(k, i))
                .setCount(ShapeValues.count(k, i))
                .setValue(ShapeValues.value(k, i));
    }

    /** Built from the innermost level out, so that each level is built once. */
    private static Level deep(int k) {
        Level inner = null;
        for (int i = DEEP_LEVELS - 1; i >= 0; i--) {
            Level.Builder level = Level.newBuilder()
                    .setId(ShapeValues.id(i))
                    .setName(ShapeValues.name(k, i))
                    .setCount(ShapeValues.count(k, i))
                    .setValue(ShapeValues.value(k, i));
            if (inner != null) {
                level.setNext(inner);
            }
            inner = level.build();
        }
        return inner;
    }

    private static Items collection(int k) {
        Items.Builder items = Items.newBuilder();
        for (int i = 0; i < COLLECTION_ITEMS; i++) {
            items.addItems(Item.newBuilder()
                    .setId(ShapeValues.id(i))
                    .setName(ShapeValues.name(k, i))
                    .setCount(ShapeValues.count(k, i))
                    .setValue(ShapeValues.value(k, i)));
        }
        return items.build();
    }

    private static String wideDifference(int k, Node root) {
        String wrong = nodeDifference(k, 0, root, WIDE_CHILDREN);
        if (wrong != null) {
            return "wide" + wrong;
        }
        for (int child = 0; child < WIDE_CHILDREN; child++) {
            Node middle = root.getChildren(child);
            wrong = nodeDifference(k, ShapeValues.wideChild(child), middle, WIDE_LEAVES);
            if (wrong != null) {
                return "wide.children[" + child + "]" + wrong;
            }
            for (int leaf = 0; leaf < WIDE_LEAVES; leaf++) {
                wrong = nodeDifference(k, ShapeValues.wideLeaf(child, leaf), middle.getChildren(leaf), 0);
                if (wrong != null) {
                    return "wide.children[" + child + "].children[" + leaf + "]" + wrong;
                }
            }
        }
        return null;
    }

    private static String nodeDifference(int k, int i, Node node, int children) {
        if (hasUnknownFields(node)) {
            return " has fields the payload sent does not have";
        }
        String wrong = ObjectDifference.of(k, i, node.getId(), node.getName(), node.getCount(), node.getValue());
        if (wrong != null) {
            return "." + wrong;
        }
        if (node.getChildrenCount() != children) {
            return " has " + ShapeValues.counted(node.getChildrenCount(), "child", "children") + " where " + children
                    + (children == 1 ? " was" : " were") + " sent";
        }
        return null;
    }

    private static String deepDifference(int k, Level top) {
        Level level = top;
        for (int i = 0; i < DEEP_LEVELS; i++) {
            if (hasUnknownFields(level)) {
                return deepLevel(i) + " has fields the payload sent does not have";
            }
            String wrong =
                    ObjectDifference.of(k, i, level.getId(), level.getName(), level.getCount(), level.getValue());
            if (wrong != null) {
                return deepLevel(i) + "." + wrong;
            }
            boolean last = i == DEEP_LEVELS - 1;
            if (level.hasNext() == last) {
                return last
                        ? "deep has more than " + DEEP_LEVELS + " levels where " + DEEP_LEVELS + " were sent"
                        : "deep has " + ShapeValues.counted(i + 1, "level", "levels") + " where " + DEEP_LEVELS
                                + " were sent";
            }
            level = level.getNext();
        }
        return null;
    }

    /** Where a level is, for a message: built only when something is wrong there. */
    private static String deepLevel(int i) {
        return i == 0 ? "deep" : "deep level " + i;
    }

    private static String collectionDifference(int k, Items items) {
        if (hasUnknownFields(items)) {
            return "collection has fields the payload sent does not have";
        }
        if (items.getItemsCount() != COLLECTION_ITEMS) {
            return "collection has " + ShapeValues.counted(items.getItemsCount(), "item", "items") + " where "
                    + COLLECTION_ITEMS + " were sent";
        }
        for (int i = 0; i < COLLECTION_ITEMS; i++) {
            Item item = items.getItems(i);
            if (hasUnknownFields(item)) {
                return "collection[" + i + "] has fields the payload sent does not have";
            }
            String wrong = ObjectDifference.of(k, i, item.getId(), item.getName(), item.getCount(), item.getValue());
            if (wrong != null) {
                return "collection[" + i + "]." + wrong;
            }
        }
        return null;
    }

    private static boolean hasUnknownFields(MessageOrBuilder message) {
        return !message.getUnknownFields().asMap().isEmpty();
    }
}
