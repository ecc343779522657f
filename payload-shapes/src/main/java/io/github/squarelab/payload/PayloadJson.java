package io.github.squarelab.payload;

import static io.github.squarelab.payload.ShapeValues.COLLECTION_ITEMS;
import static io.github.squarelab.payload.ShapeValues.DEEP_LEVELS;
import static io.github.squarelab.payload.ShapeValues.WIDE_CHILDREN;
import static io.github.squarelab.payload.ShapeValues.WIDE_LEAVES;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import com.fasterxml.jackson.annotation.JsonSetter;
import com.fasterxml.jackson.annotation.Nulls;
import java.util.List;

/**
 * A payload's JSON, one key named for its shape, keys in the order of docs/api.md: {@code {"wide":{...}}},
 * {@code {"deep":{...}}} or {@code {"collection":[...]}}; a null value counts as absent, and the lists are read-only.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonPropertyOrder({"wide", "deep", "collection"})
public record PayloadJson(Node wide, Level deep, @JsonSetter(contentNulls = Nulls.FAIL) List<Item> collection) {

    /** The shape this payload has; null if it has none or more than one (see {@link #structureError}). */
    public Shape shape() {
        int shapes = (wide != null ? 1 : 0) + (deep != null ? 1 : 0) + (collection != null ? 1 : 0);
        if (shapes != 1) {
            return null;
        }
        return wide != null ? Shape.WIDE : deep != null ? Shape.DEEP : Shape.COLLECTION;
    }

    /**
     * Null when this is exactly one shape with that shape's structure (6 children of 9 leaves, 8 levels, 100 items),
     * or else what is wrong, e.g. {@code wide.children[2] has 8 children where the shape has 9}. Checked when read
     * ({@link PayloadJsonCodec}) rather than in the constructor, so that Jackson reports an unknown key, which it
     * can only do once the record is built, before the structure it may explain.
     */
    public String structureError() {
        if (shape() == null) {
            return wide == null && deep == null && collection == null
                    ? "no shape: the object must have one key, the shape's name"
                    : "more than one shape in one payload";
        }
        return wide != null ? wideStructure(wide) : deep != null ? deepStructure(deep) : itemCount(collection);
    }

    /** A node of the wide shape; {@code children} is null (no key) for a leaf. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    @JsonPropertyOrder({"id", "name", "count", "value", "children"})
    public record Node(
            @JsonProperty(required = true) int id,
            @JsonProperty(required = true) @JsonSetter(nulls = Nulls.FAIL) String name,
            @JsonProperty(required = true) int count,
            @JsonProperty(required = true) double value,
            @JsonSetter(contentNulls = Nulls.FAIL) List<Node> children) {}

    /** A level of the deep shape; {@code next} is null (no key) on the 8th. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    @JsonPropertyOrder({"id", "name", "count", "value", "next"})
    public record Level(
            @JsonProperty(required = true) int id,
            @JsonProperty(required = true) @JsonSetter(nulls = Nulls.FAIL) String name,
            @JsonProperty(required = true) int count,
            @JsonProperty(required = true) double value,
            Level next) {}

    /** An item of the collection shape. */
    @JsonPropertyOrder({"id", "name", "count", "value"})
    public record Item(
            @JsonProperty(required = true) int id,
            @JsonProperty(required = true) @JsonSetter(nulls = Nulls.FAIL) String name,
            @JsonProperty(required = true) int count,
            @JsonProperty(required = true) double value) {}

    private static String wideStructure(Node root) {
        String wrong = childCount(-1, root, WIDE_CHILDREN);
        for (int child = 0; wrong == null && child < WIDE_CHILDREN; child++) {
            Node middle = root.children().get(child);
            wrong = childCount(child, middle, WIDE_LEAVES);
            for (int leaf = 0; wrong == null && leaf < WIDE_LEAVES; leaf++) {
                if (middle.children().get(leaf).children() != null) {
                    wrong = "wide.children[" + child + "].children[" + leaf
                            + "] has children where the shape has a leaf";
                }
            }
        }
        return wrong;
    }

    /** @param child the root's child, or -1 for the root itself; the message's place is built only when it is wrong */
    private static String childCount(int child, Node node, int expected) {
        int count = node.children() == null ? 0 : node.children().size();
        return count == expected
                ? null
                : (child < 0 ? "wide" : "wide.children[" + child + "]") + " has "
                        + ShapeValues.counted(count, "child", "children") + " where the shape has " + expected;
    }

    private static String deepStructure(Level top) {
        int levels = 0;
        for (Level level = top; level != null && levels <= DEEP_LEVELS; level = level.next()) {
            levels++;
        }
        if (levels == DEEP_LEVELS) {
            return null;
        }
        return levels > DEEP_LEVELS
                ? "deep has more than " + DEEP_LEVELS + " levels where the shape has " + DEEP_LEVELS
                : "deep has " + ShapeValues.counted(levels, "level", "levels") + " where the shape has " + DEEP_LEVELS;
    }

    private static String itemCount(List<Item> items) {
        return items.size() == COLLECTION_ITEMS
                ? null
                : "collection has " + ShapeValues.counted(items.size(), "item", "items") + " where the shape has "
                        + COLLECTION_ITEMS;
    }
}
