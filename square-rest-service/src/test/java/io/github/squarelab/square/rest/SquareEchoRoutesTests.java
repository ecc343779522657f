package io.github.squarelab.square.rest;

import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.post;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.content;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

import io.github.squarelab.payload.JsonPayloads;
import io.github.squarelab.payload.PayloadJsonCodec;
import io.github.squarelab.payload.Shape;
import java.nio.charset.StandardCharsets;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.autoconfigure.web.servlet.WebMvcTest;
import org.springframework.context.annotation.Import;
import org.springframework.http.MediaType;
import org.springframework.test.web.servlet.MockMvc;

/** POST /rest/square/unary/{number}: the square with the payload of the body echoed, and every way to get it wrong. */
@WebMvcTest(properties = "square.server=tomcat")
@Import(SquareRoutes.class)
class SquareEchoRoutesTests {

    static final String DEEP_7 = "{\"deep\":"
            + "{\"id\":0,\"name\":\"item-7-0\",\"count\":7,\"value\":7.0,\"next\":"
            + "{\"id\":1,\"name\":\"item-7-1\",\"count\":8,\"value\":7.25,\"next\":"
            + "{\"id\":2,\"name\":\"item-7-2\",\"count\":9,\"value\":7.5,\"next\":"
            + "{\"id\":3,\"name\":\"item-7-3\",\"count\":10,\"value\":7.75,\"next\":"
            + "{\"id\":4,\"name\":\"item-7-4\",\"count\":11,\"value\":8.0,\"next\":"
            + "{\"id\":5,\"name\":\"item-7-5\",\"count\":12,\"value\":8.25,\"next\":"
            + "{\"id\":6,\"name\":\"item-7-6\",\"count\":13,\"value\":8.5,\"next\":"
            + "{\"id\":7,\"name\":\"item-7-7\",\"count\":14,\"value\":8.75}}}}}}}}}";

    @Autowired
    private MockMvc mvc;

    @Test
    void answersTheSquareWithThePayloadOfTheBody() throws Exception {
        mvc.perform(post("/rest/square/unary/7")
                        .contentType(MediaType.APPLICATION_JSON)
                        .content(DEEP_7))
                .andExpect(status().isOk())
                .andExpect(content().contentType(MediaType.APPLICATION_JSON))
                .andExpect(content().string("{\"result\":49,\"payload\":" + DEEP_7 + "}"));
    }

    @ParameterizedTest
    @CsvSource(textBlock = SquareCases.ECHOES)
    void echoesEveryShapeForAnyNumber(String shape, int number, String square) throws Exception {
        String payload = json(Shape.parse(shape), number);

        mvc.perform(post("/rest/square/unary/{number}", number)
                        .contentType(MediaType.APPLICATION_JSON)
                        .content(payload))
                .andExpect(status().isOk())
                .andExpect(content().string("{\"result\":" + square + ",\"payload\":" + payload + "}"));
    }

    @Test
    void echoesWhatCameWithoutCheckingItsValuesAgainstTheNumberThatIsTheCallersJob() throws Exception {
        String payload = json(Shape.COLLECTION, 8);

        mvc.perform(post("/rest/square/unary/7")
                        .contentType("application/json;charset=UTF-8")
                        .content(payload))
                .andExpect(status().isOk())
                .andExpect(content().string("{\"result\":49,\"payload\":" + payload + "}"));
    }

    @Test
    void theSameValuesWrittenAnotherWayComeBackInTheServicesOwnForm() throws Exception {
        String spaced = DEEP_7.replace(",", " ,\n  ").replace("\"value\":8.0", "\"value\":8");

        mvc.perform(post("/rest/square/unary/7")
                        .contentType(MediaType.APPLICATION_JSON)
                        .content(spaced))
                .andExpect(status().isOk())
                .andExpect(content().string("{\"result\":49,\"payload\":" + DEEP_7 + "}"));
    }

    static Stream<Arguments> notAPayload() {
        String collection = json(Shape.COLLECTION, 7);
        return Stream.of(
                Arguments.of("", "no body: a payload is a JSON object"),
                Arguments.of(
                        "nope",
                        "not JSON: Unrecognized token 'nope': was expecting (JSON String, Number, Array,"
                                + " Object or token 'null', 'true' or 'false')"),
                Arguments.of("{}", "no shape: the object must have one key, the shape's name"),
                Arguments.of("{\"small\":{}}", "unknown key 'small'"),
                Arguments.of(
                        "{\"deep\":" + DEEP_7.substring(8, DEEP_7.length() - 1) + ",\"wide\":null," + "\"collection\":"
                                + collection.substring(14, collection.length() - 1) + "}",
                        "more than one shape in one payload"),
                Arguments.of(
                        collection.replace(",{\"id\":99,\"name\":\"item-7-99\",\"count\":106,\"value\":31.75}", ""),
                        "collection has 99 items where the shape has 100"),
                Arguments.of(DEEP_7.replace("\"count\":10,", ""), "'count' is missing in deep.next.next.next"),
                Arguments.of(
                        DEEP_7.replace("\"count\":10", "\"count\":\"10\""),
                        "wrong value at deep.next.next.next.count: a 32-bit integer belongs there"),
                Arguments.of(
                        "{\"collection\":[" + "{\"id\":0,\"name\":\"x\",\"count\":0,\"value\":0},".repeat(2000)
                                + "{\"id\":0,\"name\":\"x\",\"count\":0,\"value\":0}]}",
                        "larger than any payload: more than 65536 bytes"));
    }

    @ParameterizedTest
    @MethodSource("notAPayload")
    void aBodyThatIsNotAPayloadIsABadRequestProblemNamingTheShapes(String body, String what) throws Exception {
        mvc.perform(post("/rest/square/unary/7")
                        .contentType(MediaType.APPLICATION_JSON)
                        .content(body))
                .andExpect(status().isBadRequest())
                .andExpect(content().contentType(MediaType.APPLICATION_PROBLEM_JSON))
                .andExpect(content()
                        .string("{\"type\":\"about:blank\",\"title\":\"Bad Request\",\"status\":400,"
                                + "\"detail\":\"the body is not a payload of a known shape (wide, deep, collection): "
                                + what.replace("\"", "\\\"") + "\",\"instance\":\"/rest/square/unary/7\"}"));
    }

    @ParameterizedTest
    @CsvSource(textBlock = SquareCases.NOT_JSON)
    void aBodyThatIsNotJsonIsAnUnsupportedMediaTypeProblem(String type) throws Exception {
        mvc.perform(post("/rest/square/unary/7")
                        .header("Content-Type", type)
                        .content(DEEP_7.getBytes(StandardCharsets.UTF_8)))
                .andExpect(status().isUnsupportedMediaType())
                .andExpect(header().string("Accept", "application/json"))
                .andExpect(content().contentType(MediaType.APPLICATION_PROBLEM_JSON))
                .andExpect(content()
                        .string("{\"type\":\"about:blank\",\"title\":\"Unsupported Media Type\",\"status\":415,"
                                + "\"detail\":\"Content-Type '" + type
                                + "' is not supported: a payload is application/json\","
                                + "\"instance\":\"/rest/square/unary/7\"}"));
    }

    @Test
    void aPostWithoutAContentTypeIsAnUnsupportedMediaTypeProblem() throws Exception {
        mvc.perform(post("/rest/square/unary/7").content(DEEP_7))
                .andExpect(status().isUnsupportedMediaType())
                .andExpect(content()
                        .string("{\"type\":\"about:blank\",\"title\":\"Unsupported Media Type\",\"status\":415,"
                                + "\"detail\":\"Content-Type is missing: a payload is application/json\","
                                + "\"instance\":\"/rest/square/unary/7\"}"));
    }

    @ParameterizedTest
    @CsvSource(textBlock = SquareCases.NOT_INT32_POSTED)
    void aBadNumberIsABadRequestProblemAsForGet(String number) throws Exception {
        mvc.perform(post("/rest/square/unary/{number}", number)
                        .contentType(MediaType.APPLICATION_JSON)
                        .content(DEEP_7))
                .andExpect(status().isBadRequest())
                .andExpect(content()
                        .string("{\"type\":\"about:blank\",\"title\":\"Bad Request\",\"status\":400,"
                                + "\"detail\":\"number must be a 32-bit signed integer (from -2147483648 to 2147483647),"
                                + " got '" + number + "'\",\"instance\":\"/rest/square/unary/" + number + "\"}"));
    }

    static String json(Shape shape, int number) {
        return new String(PayloadJsonCodec.write(JsonPayloads.of(shape, number)), StandardCharsets.UTF_8);
    }
}
