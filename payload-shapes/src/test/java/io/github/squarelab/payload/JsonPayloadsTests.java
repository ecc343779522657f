package io.github.squarelab.payload;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** The JSON form: written exactly as the design shows, and the in-place check of an echo. */
class JsonPayloadsTests {

    private static final String DEEP_7 = "{\"deep\":"
            + "{\"id\":0,\"name\":\"item-7-0\",\"count\":7,\"value\":7.0,\"next\":"
            + "{\"id\":1,\"name\":\"item-7-1\",\"count\":8,\"value\":7.25,\"next\":"
            + "{\"id\":2,\"name\":\"item-7-2\",\"count\":9,\"value\":7.5,\"next\":"
            + "{\"id\":3,\"name\":\"item-7-3\",\"count\":10,\"value\":7.75,\"next\":"
            + "{\"id\":4,\"name\":\"item-7-4\",\"count\":11,\"value\":8.0,\"next\":"
            + "{\"id\":5,\"name\":\"item-7-5\",\"count\":12,\"value\":8.25,\"next\":"
            + "{\"id\":6,\"name\":\"item-7-6\",\"count\":13,\"value\":8.5,\"next\":"
            + "{\"id\":7,\"name\":\"item-7-7\",\"count\":14,\"value\":8.75}}}}}}}}}";

    private final ObjectMapper plain = new ObjectMapper();

    @Test
    void deepIsWrittenExactlyAsTheDesignShows() {
        assertThat(json(JsonPayloads.of(Shape.DEEP, 7))).isEqualTo(DEEP_7);
    }

    @Test
    void theEchoIsTheResultThenThePayload() {
        assertThat(new String(
                        PayloadJsonCodec.write(new EchoJson(49, JsonPayloads.of(Shape.DEEP, 7))),
                        StandardCharsets.UTF_8))
                .isEqualTo("{\"result\":49,\"payload\":" + DEEP_7 + "}");
    }

    @Test
    void collectionIsAListOfAHundredObjectsOfFourValues() {
        String json = json(JsonPayloads.of(Shape.COLLECTION, 7));

        assertThat(json)
                .startsWith("{\"collection\":[{\"id\":0,\"name\":\"item-7-0\",\"count\":7,\"value\":7.0},"
                        + "{\"id\":1,\"name\":\"item-7-1\",\"count\":8,\"value\":7.25},"
                        + "{\"id\":2,\"name\":\"item-7-2\",\"count\":9,\"value\":7.5},")
                .endsWith(",{\"id\":99,\"name\":\"item-7-99\",\"count\":106,\"value\":31.75}]}");
    }

    @Test
    void wideNestsSixChildrenOfNineLeavesAndLeavesHaveNoChildrenKey() throws Exception {
        String json = json(JsonPayloads.of(Shape.WIDE, 7));

        assertThat(json)
                .startsWith("{\"wide\":{\"id\":0,\"name\":\"item-7-0\",\"count\":7,\"value\":7.0,\"children\":["
                        + "{\"id\":1,\"name\":\"item-7-1\",\"count\":8,\"value\":7.25,\"children\":["
                        + "{\"id\":2,\"name\":\"item-7-2\",\"count\":9,\"value\":7.5},"
                        + "{\"id\":3,\"name\":\"item-7-3\",\"count\":10,\"value\":7.75},")
                .contains("{\"id\":10,\"name\":\"item-7-10\",\"count\":17,\"value\":9.5}]},"
                        + "{\"id\":11,\"name\":\"item-7-11\",\"count\":18,\"value\":9.75,\"children\":[")
                .endsWith("{\"id\":60,\"name\":\"item-7-60\",\"count\":67,\"value\":22.0}]}]}}");
        // The root and its six children: every other object is a leaf.
        assertThat(json.split("\"children\"", -1)).hasSize(1 + 7);
        JsonNode third = plain.readTree(json).get("wide").get("children").get(2);
        assertThat(third.get("id").asInt()).isEqualTo(21);
        assertThat(third.get("children")).hasSize(9);
        assertThat(third.get("children").get(4).toString())
                .isEqualTo("{\"id\":26,\"name\":\"item-7-26\",\"count\":33,\"value\":13.5}");
    }

    @Test
    void eachShapeCarriesItsNumberOfValues() throws Exception {
        assertThat(values(plain.readTree(json(JsonPayloads.of(Shape.WIDE, 7))))).isEqualTo(244);
        assertThat(values(plain.readTree(json(JsonPayloads.of(Shape.DEEP, 7))))).isEqualTo(32);
        assertThat(values(plain.readTree(json(JsonPayloads.of(Shape.COLLECTION, 7)))))
                .isEqualTo(400);
    }

    @ParameterizedTest
    @EnumSource(
            value = Shape.class,
            names = {"WIDE", "DEEP", "COLLECTION"})
    void whatIsWrittenReadsBackEqualAndMatchesItsNumberOnly(Shape shape) throws Exception {
        PayloadJson sent = JsonPayloads.of(shape, 7);
        PayloadJson read = PayloadJsonCodec.readPayload(PayloadJsonCodec.write(sent));

        assertThat(read).isEqualTo(sent).isEqualTo(JsonPayloads.of(shape, 7));
        assertThat(read.shape()).isEqualTo(shape);
        assertThat(JsonPayloads.difference(shape, 7, read)).isNull();
        assertThat(JsonPayloads.difference(shape, 8, read)).isNotNull();
        assertThat(JsonPayloads.of(shape, 8)).isNotEqualTo(sent);
    }

    @Test
    void theProtobufAndJsonFormsCarryTheSameValues() throws Exception {
        for (int k : new int[] {7, -3, 0, 100_000, Integer.MAX_VALUE, Integer.MIN_VALUE}) {
            JsonNode deep = plain.readTree(json(JsonPayloads.of(Shape.DEEP, k))).get("deep");
            for (io.github.squarelab.proto.Level level =
                            ProtoPayloads.of(Shape.DEEP, k).getDeep();
                    level != null;
                    level = level.hasNext() ? level.getNext() : null) {
                assertThat(deep.get("id").asInt()).isEqualTo(level.getId());
                assertThat(deep.get("name").asText()).isEqualTo(level.getName());
                assertThat(deep.get("count").asInt()).isEqualTo(level.getCount());
                assertThat(deep.get("value").asDouble()).isEqualTo(level.getValue());
                deep = deep.get("next");
            }
            assertThat(deep).isNull();
            JsonNode items =
                    plain.readTree(json(JsonPayloads.of(Shape.COLLECTION, k))).get("collection");
            List<io.github.squarelab.proto.Item> protoItems =
                    ProtoPayloads.of(Shape.COLLECTION, k).getCollection().getItemsList();
            for (int i = 0; i < 100; i++) {
                assertThat(items.get(i).get("name").asText())
                        .isEqualTo(protoItems.get(i).getName());
                assertThat(items.get(i).get("count").asInt())
                        .isEqualTo(protoItems.get(i).getCount());
                assertThat(items.get(i).get("value").asDouble())
                        .isEqualTo(protoItems.get(i).getValue());
            }
        }
    }

    @Test
    void theCheckSaysWhatDiffersFirst() throws Exception {
        assertThat(JsonPayloads.difference(Shape.COLLECTION, 7, read(json(JsonPayloads.of(Shape.DEEP, 7)))))
                .isEqualTo("a deep payload where a collection payload was sent");
        assertThat(JsonPayloads.difference(Shape.DEEP, 7, read(DEEP_7.replace("\"count\":12", "\"count\":13"))))
                .isEqualTo("deep level 5.count 13 where 12 was sent");
        assertThat(JsonPayloads.difference(Shape.DEEP, 7, read(DEEP_7.replace("item-7-0", "item-7-00"))))
                .isEqualTo("deep.name 'item-7-00' where 'item-7-0' was sent");
        String collection = json(JsonPayloads.of(Shape.COLLECTION, 7));
        assertThat(JsonPayloads.difference(Shape.COLLECTION, 7, read(collection.replace("31.75", "31.5"))))
                .isEqualTo("collection[99].value 31.5 where 31.75 was sent");
        assertThat(JsonPayloads.difference(Shape.COLLECTION, 7, read(collection.replace("\"id\":42", "\"id\":24"))))
                .isEqualTo("collection[42].id 24 where 42 was sent");
        String wide = json(JsonPayloads.of(Shape.WIDE, 7));
        assertThat(JsonPayloads.difference(Shape.WIDE, 7, read(wide.replace("item-7-26\"", "item-7-62\""))))
                .isEqualTo("wide.children[2].children[4].name 'item-7-62' where 'item-7-26' was sent");
        assertThat(JsonPayloads.difference(Shape.WIDE, 7, read(wide.replace("\"value\":12.25", "\"value\":12.5"))))
                .isEqualTo("wide.children[2].value 12.5 where 12.25 was sent");
        // The same number written another way is the same value.
        assertThat(JsonPayloads.difference(Shape.DEEP, 7, read(DEEP_7.replace("\"value\":8.0", "\"value\":8"))))
                .isNull();
    }

    @Test
    void smallCarriesNone() {
        assertThatThrownBy(() -> JsonPayloads.of(Shape.SMALL, 7)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aRecordWithoutAKnownShapesStructureSaysWhatIsWrongAndNeverMatches() {
        PayloadJson empty = new PayloadJson(null, null, List.of());
        assertThat(empty.structureError()).isEqualTo("collection has 0 items where the shape has 100");
        assertThat(JsonPayloads.difference(Shape.COLLECTION, 1, empty))
                .isEqualTo("collection has 0 items where the shape has 100");
        PayloadJson none = new PayloadJson(null, null, null);
        assertThat(none.shape()).isNull();
        assertThat(none.structureError()).isEqualTo("no shape: the object must have one key, the shape's name");
        List<PayloadJson.Item> items =
                new ArrayList<>(JsonPayloads.of(Shape.COLLECTION, 1).collection());
        PayloadJson two = new PayloadJson(null, JsonPayloads.of(Shape.DEEP, 1).deep(), items);
        assertThat(two.structureError()).isEqualTo("more than one shape in one payload");
        assertThat(JsonPayloads.difference(Shape.DEEP, 1, two)).isEqualTo("more than one shape in one payload");
        assertThat(JsonPayloads.of(Shape.WIDE, 1).structureError()).isNull();
    }

    private static PayloadJson read(String json) throws InvalidPayloadException {
        return PayloadJsonCodec.readPayload(json.getBytes(StandardCharsets.UTF_8));
    }

    private static String json(PayloadJson payload) {
        return new String(PayloadJsonCodec.write(payload), StandardCharsets.UTF_8);
    }

    private static int values(JsonNode node) {
        if (node.isValueNode()) {
            return 1;
        }
        int values = 0;
        for (JsonNode child : node) {
            values += values(child);
        }
        return values;
    }
}
