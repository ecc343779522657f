package io.github.squarelab.payload;

/** Compares one object's four values with those of position {@code i} for the number {@code k}. */
final class ObjectDifference {

    private ObjectDifference() {}

    /**
     * Null when id, name, count and value are those of position {@code i} for {@code k}; else the first that
     * differs, e.g. {@code name 'item-7-4' where 'item-7-3' was sent}. Allocates nothing when all four are right.
     */
    static String of(int k, int i, int id, String name, int count, double value) {
        if (id != ShapeValues.id(i)) {
            return "id " + id + " where " + ShapeValues.id(i) + " was sent";
        }
        if (!ShapeValues.isName(name, k, i)) {
            return "name '" + name + "' where '" + ShapeValues.name(k, i) + "' was sent";
        }
        if (count != ShapeValues.count(k, i)) {
            return "count " + count + " where " + ShapeValues.count(k, i) + " was sent";
        }
        if (!ShapeValues.sameValue(value, ShapeValues.value(k, i))) {
            return "value " + value + " where " + ShapeValues.value(k, i) + " was sent";
        }
        return null;
    }
}
