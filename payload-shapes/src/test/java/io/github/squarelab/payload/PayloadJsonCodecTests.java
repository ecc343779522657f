package io.github.squarelab.payload;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Strict reading: anything but exactly a payload of a known shape is refused, saying what was wrong and where. */
class PayloadJsonCodecTests {

    private static final String DEEP = json(JsonPayloads.of(Shape.DEEP, 7));
    private static final String WIDE = json(JsonPayloads.of(Shape.WIDE, 7));
    private static final String COLLECTION = json(JsonPayloads.of(Shape.COLLECTION, 7));
    private static final String ITEM_3 = "{\"id\":3,\"name\":\"item-7-3\",\"count\":10,\"value\":7.75}";
    private static final String LEAF_2 = "{\"id\":2,\"name\":\"item-7-2\",\"count\":9,\"value\":7.5}";

    static Stream<Arguments> notAPayload() {
        return Stream.of(
                Arguments.of("", "no body: a payload is a JSON object"),
                Arguments.of("   ", "no body: a payload is a JSON object"),
                Arguments.of("{}", "no shape: the object must have one key, the shape's name"),
                Arguments.of("{\"small\":{}}", "unknown key 'small'"),
                Arguments.of("{\"deep\":null}", "no shape: the object must have one key, the shape's name"),
                Arguments.of(
                        "{\"deep\":" + inner(DEEP) + ",\"collection\":" + inner(COLLECTION) + "}",
                        "more than one shape in one payload"),
                Arguments.of(COLLECTION.replace(ITEM_3 + ",", ""), "collection has 99 items where the shape has 100"),
                Arguments.of(
                        COLLECTION.replace(ITEM_3, ITEM_3 + "," + ITEM_3),
                        "collection has 101 items where the shape has 100"),
                Arguments.of(
                        COLLECTION.replace(ITEM_3, ITEM_3.replace("}", ",\"extra\":1}")),
                        "unknown key 'extra' in collection[3]"),
                Arguments.of(
                        COLLECTION.replace(ITEM_3, ITEM_3.replace("\"name\":\"item-7-3\",", "")),
                        "'name' is missing in collection[3]"),
                Arguments.of(
                        COLLECTION.replace(ITEM_3, ITEM_3.replace("\"item-7-3\"", "null")),
                        "'name' is null in collection[3]"),
                Arguments.of(COLLECTION.replace(ITEM_3, "null"), "collection[3] is null"),
                Arguments.of(
                        COLLECTION.replace(ITEM_3, ITEM_3.replace("\"count\":10", "\"count\":null")),
                        "wrong value at collection[3].count: a 32-bit integer belongs there"),
                Arguments.of(
                        "{\"deep\":" + inner(DEEP).replaceFirst(",\"next\":\\{.*", "}") + "}",
                        "deep has 1 level where the shape has 8"),
                Arguments.of(WIDE.replace(LEAF_2 + ",", ""), "wide.children[0] has 8 children where the shape has 9"),
                Arguments.of(
                        WIDE.replace(LEAF_2, LEAF_2.replace("}", ",\"children\":[]}")),
                        "wide.children[0].children[0] has children where the shape has a leaf"),
                Arguments.of("[" + DEEP + "]", "not a JSON object"),
                Arguments.of("\"deep\"", "not a JSON object"),
                Arguments.of(
                        "nope",
                        "not JSON: Unrecognized token 'nope': was expecting (JSON String, Number, Array,"
                                + " Object or token 'null', 'true' or 'false')"),
                Arguments.of(DEEP + " {}", "more than one JSON value: a payload is one JSON object"),
                // Not JSON inside the object, where Jackson was reading a value: still not JSON, not a wrong value.
                Arguments.of(
                        DEEP.replace("\"value\":8.0", "\"value\":NaN"),
                        "not JSON: Non-standard token 'NaN': enable `JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS` to"
                                + " allow"),
                Arguments.of(
                        DEEP.replace("\"item-7-0\"", "'item-7-0'"),
                        "not JSON: Unexpected character (''' (code 39)): expected a valid value (JSON String, Number,"
                                + " Array, Object or token 'null', 'true' or 'false')"),
                Arguments.of(
                        DEEP.replace("\"count\":7,", "\"count\":7x,"),
                        "not JSON: Unexpected character ('x' (code 120)): was expecting comma to separate Object"
                                + " entries"),
                // Jackson's own limit (1000) let a body this deep overflow the stack of a request thread (-Xss512k).
                Arguments.of(
                        "{\"deep\":" + "{\"id\":0,\"name\":\"a\",\"count\":0,\"value\":0,\"next\":".repeat(999) + "null"
                                + "}".repeat(1000),
                        "nested deeper than any payload: more than 16 levels of objects and lists"),
                Arguments.of(
                        "{\"deep\":" + "{\"id\":0,\"name\":\"a\",\"count\":0,\"value\":0,\"next\":".repeat(16) + "null"
                                + "}".repeat(17),
                        "nested deeper than any payload: more than 16 levels of objects and lists"),
                Arguments.of(
                        DEEP.substring(0, DEEP.length() - 1),
                        "not JSON: Unexpected end-of-input: expected close marker for Object"));
    }

    @ParameterizedTest
    @MethodSource("notAPayload")
    void refusesWhatIsNotExactlyAPayloadSayingWhatWasWrong(String body, String message) {
        if (message != null) {
            assertThatThrownBy(() -> read(body))
                    .isInstanceOf(InvalidPayloadException.class)
                    .hasMessage(message);
        } else {
            assertThatThrownBy(() -> read(body)).isInstanceOf(InvalidPayloadException.class);
        }
    }

    static Stream<Arguments> wrongTypes() {
        return Stream.of(
                Arguments.of("\"id\":3", "\"id\":\"3\"", "id: a 32-bit integer"),
                Arguments.of("\"id\":3", "\"id\":3.5", "id: a 32-bit integer"),
                Arguments.of("\"id\":3", "\"id\":2147483648", "id: a 32-bit integer"),
                Arguments.of("\"id\":3", "\"id\":null", "id: a 32-bit integer"),
                Arguments.of("\"item-7-3\"", "7", "name: a string"),
                Arguments.of("\"item-7-3\"", "true", "name: a string"),
                Arguments.of("\"value\":7.75", "\"value\":\"7.75\"", "value: a number"),
                Arguments.of("\"value\":7.75", "\"value\":true", "value: a number"));
    }

    @ParameterizedTest
    @MethodSource("wrongTypes")
    void refusesAValueOfTheWrongTypeWithoutCoercingIt(String right, String wrong, String message) {
        assertThatThrownBy(() -> read(DEEP.replace(right, wrong)))
                .isInstanceOf(InvalidPayloadException.class)
                .hasMessage("wrong value at deep.next.next.next." + message + " belongs there");
    }

    @Test
    void saysHowManyLevelsDeepHas() {
        String seven = DEEP.replace(",\"next\":{\"id\":7,\"name\":\"item-7-7\",\"count\":14,\"value\":8.75}", "");
        assertThatThrownBy(() -> read(seven)).hasMessage("deep has 7 levels where the shape has 8");
        String nine = DEEP.replace(
                "\"value\":8.75}",
                "\"value\":8.75,\"next\":{\"id\":8,\"name\":\"item-7-8\",\"count\":15,\"value\":9.0}}");
        assertThatThrownBy(() -> read(nine)).hasMessage("deep has more than 8 levels where the shape has 8");
    }

    @Test
    void readsTheSameFromAStreamAsFromBytes() throws Exception {
        PayloadJson payload =
                PayloadJsonCodec.readPayload(new ByteArrayInputStream(WIDE.getBytes(StandardCharsets.UTF_8)));

        assertThat(payload).isEqualTo(JsonPayloads.of(Shape.WIDE, 7));
    }

    @Test
    void readsAnEchoStrictlyToo() throws Exception {
        EchoJson echo = PayloadJsonCodec.readEcho(bytes("{\"result\":49,\"payload\":" + DEEP + "}"));
        assertThat(echo).isEqualTo(new EchoJson(49, JsonPayloads.of(Shape.DEEP, 7)));

        assertThatThrownBy(() -> PayloadJsonCodec.readEcho(bytes("{\"result\":49}")))
                .hasMessage("'payload' is missing");
        assertThatThrownBy(() -> PayloadJsonCodec.readEcho(bytes("49"))).hasMessage("not a JSON object");
        assertThatThrownBy(() -> PayloadJsonCodec.readEcho(bytes("{\"payload\":" + DEEP + "}")))
                .hasMessage("'result' is missing");
        assertThatThrownBy(() -> PayloadJsonCodec.readEcho(bytes("{\"result\":49,\"payload\":"
                        + DEEP.replace(",\"next\":{\"id\":7,", ",\"nxt\":{\"id\":7,") + "}")))
                .hasMessage("unknown key 'nxt' in payload.deep.next.next.next.next.next.next");
        assertThatThrownBy(() -> PayloadJsonCodec.readEcho(bytes("{\"result\":49,\"payload\":{}}")))
                .hasMessage("no shape: the object must have one key, the shape's name in payload");
    }

    private static PayloadJson read(String body) throws InvalidPayloadException {
        return PayloadJsonCodec.readPayload(bytes(body));
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    /** The object inside {"shape":...}. */
    private static String inner(String payload) {
        return payload.substring(payload.indexOf(':') + 1, payload.length() - 1);
    }

    private static String json(PayloadJson payload) {
        return new String(PayloadJsonCodec.write(payload), StandardCharsets.UTF_8);
    }
}
