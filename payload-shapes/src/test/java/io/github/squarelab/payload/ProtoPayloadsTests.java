package io.github.squarelab.payload;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Message;
import com.google.protobuf.UnknownFieldSet;
import io.github.squarelab.proto.Item;
import io.github.squarelab.proto.Items;
import io.github.squarelab.proto.Level;
import io.github.squarelab.proto.Node;
import io.github.squarelab.proto.Payload;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class ProtoPayloadsTests {

    @Test
    void eachShapeCarriesItsNumberOfValues() {
        assertThat(values(ProtoPayloads.of(Shape.WIDE, 7))).isEqualTo(244);
        assertThat(values(ProtoPayloads.of(Shape.DEEP, 7))).isEqualTo(32);
        assertThat(values(ProtoPayloads.of(Shape.COLLECTION, 7))).isEqualTo(400);
    }

    @Test
    void smallCarriesNone() {
        assertThatThrownBy(() -> ProtoPayloads.of(Shape.SMALL, 7)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void wideIsARootWithSixChildrenOfNineLeavesNumberedInPreOrder() {
        Node root = ProtoPayloads.of(Shape.WIDE, 7).getWide();

        assertThat(root)
                .isEqualTo(node(0, "item-7-0", 7, 7.0)
                        .addAllChildren(root.getChildrenList())
                        .build());
        assertThat(root.getChildrenCount()).isEqualTo(6);
        Node third = root.getChildren(2);
        assertThat(third.toBuilder().clearChildren().build())
                .isEqualTo(node(21, "item-7-21", 28, 12.25).build());
        assertThat(third.getChildrenCount()).isEqualTo(9);
        assertThat(third.getChildren(4))
                .isEqualTo(node(26, "item-7-26", 33, 13.5).build());
        assertThat(root.getChildren(5).getChildren(8))
                .isEqualTo(node(60, "item-7-60", 67, 22.0).build());
        for (Node middle : root.getChildrenList()) {
            assertThat(middle.getChildrenCount()).isEqualTo(9);
            for (Node leaf : middle.getChildrenList()) {
                assertThat(leaf.getChildrenCount()).isZero();
            }
        }
    }

    @Test
    void deepIsEightLevelsTheLastWithoutNext() {
        Level level = ProtoPayloads.of(Shape.DEEP, -3).getDeep();

        for (int i = 0; i < 8; i++) {
            assertThat(level.getId()).isEqualTo(i);
            assertThat(level.getName()).isEqualTo("item--3-" + i);
            assertThat(level.getCount()).isEqualTo(-3 + i);
            assertThat(level.getValue()).isEqualTo(-3 + i / 4.0);
            assertThat(level.hasNext()).isEqualTo(i < 7);
            level = level.getNext();
        }
    }

    @Test
    void collectionIsAHundredItemsInOrder() {
        Items items = ProtoPayloads.of(Shape.COLLECTION, 7).getCollection();

        assertThat(items.getItemsCount()).isEqualTo(100);
        assertThat(items.getItems(0))
                .isEqualTo(Item.newBuilder()
                        .setId(0)
                        .setName("item-7-0")
                        .setCount(7)
                        .setValue(7.0)
                        .build());
        assertThat(items.getItems(99))
                .isEqualTo(Item.newBuilder()
                        .setId(99)
                        .setName("item-7-99")
                        .setCount(106)
                        .setValue(31.75)
                        .build());
        Item last = ProtoPayloads.of(Shape.COLLECTION, Integer.MAX_VALUE)
                .getCollection()
                .getItems(99);
        assertThat(last.getCount()).isEqualTo(-2147483550);
        assertThat(last.getValue()).isEqualTo(2147483671.75);
    }

    @ParameterizedTest
    @EnumSource(
            value = Shape.class,
            names = {"WIDE", "DEEP", "COLLECTION"})
    void thePayloadOfANumberEqualsItselfBuiltAgainAndAfterTheWireAndNoOtherNumbers(Shape shape) throws Exception {
        Payload sent = ProtoPayloads.of(shape, 7);
        Payload echoed = Payload.parseFrom(sent.toByteArray());

        assertThat(echoed).isEqualTo(ProtoPayloads.of(shape, 7));
        assertThat(ProtoPayloads.difference(shape, 7, echoed)).isNull();
        assertThat(ProtoPayloads.of(shape, 8)).isNotEqualTo(sent);
        assertThat(ProtoPayloads.difference(shape, 8, echoed)).isNotNull();
    }

    @ParameterizedTest
    @EnumSource(
            value = Shape.class,
            names = {"WIDE", "DEEP", "COLLECTION"})
    void theInPlaceCheckAgreesWithEqualsOnEveryChange(Shape shape) {
        Payload sent = ProtoPayloads.of(shape, 7);
        for (Map.Entry<String, Payload> changed : changes(sent).entrySet()) {
            Payload echo = changed.getValue();
            assertThat(ProtoPayloads.difference(shape, 7, echo) == null)
                    .as(changed.getKey() + ": " + ProtoPayloads.difference(shape, 7, echo))
                    .isEqualTo(echo.equals(sent));
        }
    }

    @Test
    void theCheckSaysWhatDiffersFirst() {
        Payload wide = ProtoPayloads.of(Shape.WIDE, 7);
        Payload deep = ProtoPayloads.of(Shape.DEEP, 7);
        Payload collection = ProtoPayloads.of(Shape.COLLECTION, 7);

        assertThat(ProtoPayloads.difference(Shape.WIDE, 7, Payload.getDefaultInstance()))
                .isEqualTo("an empty payload where a wide payload was sent");
        assertThat(ProtoPayloads.difference(Shape.WIDE, 7, deep))
                .isEqualTo("a deep payload where a wide payload was sent");
        assertThat(ProtoPayloads.difference(Shape.COLLECTION, 7, withItem(collection, 3, item -> item.setName("x"))))
                .isEqualTo("collection[3].name 'x' where 'item-7-3' was sent");
        assertThat(ProtoPayloads.difference(Shape.COLLECTION, 7, withItem(collection, 99, item -> item.setValue(1))))
                .isEqualTo("collection[99].value 1.0 where 31.75 was sent");
        assertThat(ProtoPayloads.difference(
                        Shape.COLLECTION,
                        7,
                        collection.toBuilder()
                                .setCollection(
                                        collection.getCollection().toBuilder().removeItems(99))
                                .build()))
                .isEqualTo("collection has 99 items where 100 were sent");
        assertThat(ProtoPayloads.difference(Shape.WIDE, 7, withLeaf(wide, 2, 4, leaf -> leaf.setCount(0))))
                .isEqualTo("wide.children[2].children[4].count 0 where 33 was sent");
        assertThat(ProtoPayloads.difference(
                        Shape.WIDE, 7, withLeaf(wide, 2, 4, leaf -> leaf.addChildren(Node.getDefaultInstance()))))
                .isEqualTo("wide.children[2].children[4] has 1 child where 0 were sent");
        assertThat(ProtoPayloads.difference(Shape.WIDE, 7, withRoot(wide, root -> root.setId(1))))
                .isEqualTo("wide.id 1 where 0 was sent");
        assertThat(ProtoPayloads.difference(Shape.DEEP, 7, withLevel(deep, 3, level -> level.setCount(1))))
                .isEqualTo("deep level 3.count 1 where 10 was sent");
        assertThat(ProtoPayloads.difference(Shape.DEEP, 7, withLevel(deep, 6, Level.Builder::clearNext)))
                .isEqualTo("deep has 7 levels where 8 were sent");
        assertThat(ProtoPayloads.difference(
                        Shape.DEEP, 7, withLevel(deep, 7, level -> level.setNext(Level.getDefaultInstance()))))
                .isEqualTo("deep has more than 8 levels where 8 were sent");
        assertThat(ProtoPayloads.difference(Shape.COLLECTION, 7, withItem(collection, 5, ProtoPayloadsTests::unknown)))
                .isEqualTo("collection[5] has fields the payload sent does not have");
    }

    /** Every change a faulty echo could make, one at a time, and a few that change nothing. */
    private static Map<String, Payload> changes(Payload sent) {
        Map<String, Payload> changes = new LinkedHashMap<>();
        changes.put("unchanged", sent);
        changes.put("rebuilt", sent.toBuilder().build());
        changes.put("empty", Payload.getDefaultInstance());
        changes.put("unknown field on the payload", unknown(sent.toBuilder()).build());
        switch (sent.getShapeCase()) {
            case WIDE -> {
                for (int child = 0; child < 6; child += 5) {
                    for (int leaf = 0; leaf < 9; leaf += 4) {
                        int c = child;
                        int l = leaf;
                        String where = "leaf " + c + "/" + l + " ";
                        changes.put(where + "id", withLeaf(sent, c, l, n -> n.setId(n.getId() + 1)));
                        changes.put(where + "name", withLeaf(sent, c, l, n -> n.setName(n.getName() + "x")));
                        changes.put(where + "count", withLeaf(sent, c, l, n -> n.setCount(n.getCount() - 1)));
                        changes.put(where + "value", withLeaf(sent, c, l, n -> n.setValue(n.getValue() + 0.25)));
                        changes.put(where + "same value", withLeaf(sent, c, l, n -> n.setValue(n.getValue())));
                        changes.put(
                                where + "child", withLeaf(sent, c, l, n -> n.addChildren(Node.getDefaultInstance())));
                        changes.put(where + "unknown", withLeaf(sent, c, l, ProtoPayloadsTests::unknown));
                    }
                }
                changes.put("root name", withRoot(sent, n -> n.setName("item-7-1")));
                changes.put("root child removed", withRoot(sent, n -> n.removeChildren(5)));
                changes.put("root child added", withRoot(sent, n -> n.addChildren(n.getChildren(0))));
                changes.put("root unknown", withRoot(sent, ProtoPayloadsTests::unknown));
            }
            case DEEP -> {
                for (int i = 0; i < 8; i++) {
                    String where = "level " + i + " ";
                    changes.put(where + "id", withLevel(sent, i, l -> l.setId(l.getId() + 1)));
                    changes.put(where + "name", withLevel(sent, i, l -> l.setName("")));
                    changes.put(where + "count", withLevel(sent, i, l -> l.setCount(l.getCount() + 1)));
                    changes.put(where + "value", withLevel(sent, i, l -> l.setValue(Double.NaN)));
                    changes.put(where + "unknown", withLevel(sent, i, ProtoPayloadsTests::unknown));
                }
                changes.put("cut after 7", withLevel(sent, 6, Level.Builder::clearNext));
                changes.put("a ninth level", withLevel(sent, 7, l -> l.setNext(Level.getDefaultInstance())));
            }
            case COLLECTION -> {
                for (int i = 0; i < 100; i += 11) {
                    String where = "item " + i + " ";
                    changes.put(where + "id", withItem(sent, i, it -> it.setId(-it.getId() - 1)));
                    changes.put(where + "name", withItem(sent, i, it -> it.setName("item-8-" + it.getId())));
                    changes.put(where + "count", withItem(sent, i, it -> it.setCount(it.getCount() * 2 + 1)));
                    changes.put(where + "value", withItem(sent, i, it -> it.setValue(-it.getValue() - 1)));
                    changes.put(where + "unknown", withItem(sent, i, ProtoPayloadsTests::unknown));
                }
                Items items = sent.getCollection();
                changes.put(
                        "one fewer",
                        sent.toBuilder()
                                .setCollection(items.toBuilder().removeItems(0))
                                .build());
                changes.put(
                        "one more",
                        sent.toBuilder()
                                .setCollection(items.toBuilder().addItems(items.getItems(0)))
                                .build());
                changes.put(
                        "unknown on the list",
                        sent.toBuilder()
                                .setCollection(unknown(items.toBuilder()))
                                .build());
            }
            default -> throw new IllegalArgumentException(sent.toString());
        }
        return changes;
    }

    private static Payload withRoot(Payload wide, UnaryOperator<Node.Builder> change) {
        return wide.toBuilder()
                .setWide(change.apply(wide.getWide().toBuilder()))
                .build();
    }

    private static Payload withLeaf(Payload wide, int child, int leaf, UnaryOperator<Node.Builder> change) {
        Node root = wide.getWide();
        Node middle = root.getChildren(child);
        Node changed = middle.toBuilder()
                .setChildren(leaf, change.apply(middle.getChildren(leaf).toBuilder()))
                .build();
        return wide.toBuilder()
                .setWide(root.toBuilder().setChildren(child, changed))
                .build();
    }

    private static Payload withLevel(Payload deep, int depth, UnaryOperator<Level.Builder> change) {
        return deep.toBuilder()
                .setDeep(changeLevel(deep.getDeep(), depth, change))
                .build();
    }

    private static Level changeLevel(Level level, int depth, UnaryOperator<Level.Builder> change) {
        if (depth == 0) {
            return change.apply(level.toBuilder()).build();
        }
        return level.toBuilder()
                .setNext(changeLevel(level.getNext(), depth - 1, change))
                .build();
    }

    private static Payload withItem(Payload collection, int index, UnaryOperator<Item.Builder> change) {
        Items items = collection.getCollection();
        return collection.toBuilder()
                .setCollection(items.toBuilder().setItems(index, change.apply(items.getItems(index).toBuilder())))
                .build();
    }

    private static <B extends Message.Builder> B unknown(B builder) {
        builder.setUnknownFields(UnknownFieldSet.newBuilder()
                .addField(99, UnknownFieldSet.Field.newBuilder().addVarint(1).build())
                .build());
        return builder;
    }

    private static Node.Builder node(int id, String name, int count, double value) {
        return Node.newBuilder().setId(id).setName(name).setCount(count).setValue(value);
    }

    /** The scalar values of a message and of every message within it, whether or not proto3 writes them. */
    private static int values(Message message) {
        int values = 0;
        for (FieldDescriptor field : message.getDescriptorForType().getFields()) {
            if (field.getJavaType() != FieldDescriptor.JavaType.MESSAGE) {
                values++;
            } else if (field.isRepeated()) {
                for (int i = 0; i < message.getRepeatedFieldCount(field); i++) {
                    values += values((Message) message.getRepeatedField(field, i));
                }
            } else if (message.hasField(field)) {
                values += values((Message) message.getField(field));
            }
        }
        return values;
    }
}
