package io.github.squarelab.square.rest;

import static io.github.squarelab.square.rest.SquareEchoRoutesTests.DEEP_7;
import static io.github.squarelab.square.rest.SquareEchoRoutesTests.json;

import io.github.squarelab.payload.Shape;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.autoconfigure.web.reactive.WebFluxTest;
import org.springframework.context.annotation.Import;
import org.springframework.http.HttpMethod;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;

/** {@link SquareReactiveRoutes} (square.server=netty) against the cases of the MVC routes' tests, answered the same. */
@WebFluxTest
@Import(SquareReactiveRoutes.class)
class SquareReactiveRoutesTests {

    @Autowired
    private WebTestClient client;

    @ParameterizedTest
    @CsvSource(textBlock = SquareCases.SQUARES)
    void answersTheSquareAsABareJsonNumber(String number, String square) {
        client.get()
                .uri("/rest/square/unary/{number}", number)
                .exchange()
                .expectStatus()
                .isOk()
                .expectHeader()
                .contentType(MediaType.APPLICATION_JSON)
                .expectBody(String.class)
                .isEqualTo(square);
    }

    @ParameterizedTest
    @CsvSource(textBlock = SquareCases.NOT_INT32)
    void rejectsAnythingButA32BitIntegerWithAProblem(String number) {
        client.get()
                .uri("/rest/square/unary/{number}", number)
                .exchange()
                .expectStatus()
                .isBadRequest()
                .expectHeader()
                .contentType(MediaType.APPLICATION_PROBLEM_JSON)
                .expectBody()
                .jsonPath("$.type")
                .isEqualTo("about:blank")
                .jsonPath("$.title")
                .isEqualTo("Bad Request")
                .jsonPath("$.status")
                .isEqualTo(400)
                .jsonPath("$.detail")
                .isEqualTo("number must be a 32-bit signed integer (from -2147483648 to 2147483647), got '" + number
                        + "'");
    }

    @Test
    void headAnswersAsGetDoesAndOptionsListsTheMethods() {
        client.head()
                .uri("/rest/square/unary/7")
                .exchange()
                .expectStatus()
                .isOk()
                .expectHeader()
                .contentType(MediaType.APPLICATION_JSON);
        client.options()
                .uri("/rest/square/unary/7")
                .exchange()
                .expectStatus()
                .isOk()
                .expectHeader()
                .valueEquals("Allow", "GET,HEAD,POST,OPTIONS");
    }

    @Test
    void aProblemNamesThePathItIsAbout() {
        client.get()
                .uri("/rest/square/unary/abc")
                .exchange()
                .expectStatus()
                .isBadRequest()
                .expectBody()
                .jsonPath("$.instance")
                .isEqualTo("/rest/square/unary/abc");
    }

    @Test
    void unknownPathIsANotFoundProblemAsSpringMvcWordsIt() {
        client.get()
                .uri("/rest/square/binary/7")
                .exchange()
                .expectStatus()
                .isNotFound()
                .expectHeader()
                .contentType(MediaType.APPLICATION_PROBLEM_JSON)
                .expectBody(String.class)
                .isEqualTo("{\"type\":\"about:blank\",\"title\":\"Not Found\",\"status\":404,"
                        + "\"detail\":\"No endpoint GET /rest/square/binary/7.\","
                        + "\"instance\":\"/rest/square/binary/7\"}");
    }

    @ParameterizedTest
    @CsvSource(textBlock = SquareCases.OTHER_METHODS)
    void otherMethodsAreRefusedWithAProblem(String method) {
        client.method(HttpMethod.valueOf(method))
                .uri("/rest/square/unary/7")
                .exchange()
                .expectStatus()
                .isEqualTo(405)
                .expectHeader()
                .contentType(MediaType.APPLICATION_PROBLEM_JSON)
                .expectHeader()
                .valueEquals("Allow", "GET,HEAD,POST,OPTIONS")
                .expectBody(String.class)
                .isEqualTo("{\"type\":\"about:blank\",\"title\":\"Method Not Allowed\",\"status\":405,"
                        + "\"detail\":\"Method '" + method + "' is not supported.\","
                        + "\"instance\":\"/rest/square/unary/7\"}");
    }

    @Test
    void answersTheSquareWithThePayloadOfTheBody() {
        post("/rest/square/unary/7", "application/json", DEEP_7)
                .expectStatus()
                .isOk()
                .expectHeader()
                .contentType(MediaType.APPLICATION_JSON)
                .expectBody(String.class)
                .isEqualTo("{\"result\":49,\"payload\":" + DEEP_7 + "}");
    }

    @ParameterizedTest
    @CsvSource(textBlock = SquareCases.ECHOES)
    void echoesEveryShapeForAnyNumber(String shape, int number, String square) {
        String payload = json(Shape.parse(shape), number);

        post("/rest/square/unary/" + number, "application/json", payload)
                .expectStatus()
                .isOk()
                .expectBody(String.class)
                .isEqualTo("{\"result\":" + square + ",\"payload\":" + payload + "}");
    }

    @Test
    void echoesWhatCameWithoutCheckingItsValuesAgainstTheNumberThatIsTheCallersJob() {
        String payload = json(Shape.COLLECTION, 8);

        post("/rest/square/unary/7", "application/json;charset=UTF-8", payload)
                .expectStatus()
                .isOk()
                .expectBody(String.class)
                .isEqualTo("{\"result\":49,\"payload\":" + payload + "}");
    }

    @Test
    void theSameValuesWrittenAnotherWayComeBackInTheServicesOwnForm() {
        String spaced = DEEP_7.replace(",", " ,\n  ").replace("\"value\":8.0", "\"value\":8");

        post("/rest/square/unary/7", "application/json", spaced)
                .expectStatus()
                .isOk()
                .expectBody(String.class)
                .isEqualTo("{\"result\":49,\"payload\":" + DEEP_7 + "}");
    }

    @ParameterizedTest
    @MethodSource("io.github.squarelab.square.rest.SquareEchoRoutesTests#notAPayload")
    void aBodyThatIsNotAPayloadIsABadRequestProblemNamingTheShapes(String body, String what) {
        post("/rest/square/unary/7", "application/json", body)
                .expectStatus()
                .isBadRequest()
                .expectHeader()
                .contentType(MediaType.APPLICATION_PROBLEM_JSON)
                .expectBody(String.class)
                .isEqualTo("{\"type\":\"about:blank\",\"title\":\"Bad Request\",\"status\":400,"
                        + "\"detail\":\"the body is not a payload of a known shape (wide, deep, collection): "
                        + what.replace("\"", "\\\"") + "\",\"instance\":\"/rest/square/unary/7\"}");
    }

    @ParameterizedTest
    @CsvSource(textBlock = SquareCases.NOT_JSON)
    void aBodyThatIsNotJsonIsAnUnsupportedMediaTypeProblem(String type) {
        post("/rest/square/unary/7", type, DEEP_7)
                .expectStatus()
                .isEqualTo(415)
                .expectHeader()
                .valueEquals("Accept", "application/json")
                .expectHeader()
                .contentType(MediaType.APPLICATION_PROBLEM_JSON)
                .expectBody(String.class)
                .isEqualTo("{\"type\":\"about:blank\",\"title\":\"Unsupported Media Type\",\"status\":415,"
                        + "\"detail\":\"Content-Type '" + type
                        + "' is not supported: a payload is application/json\","
                        + "\"instance\":\"/rest/square/unary/7\"}");
    }

    @Test
    void aPostWithoutAContentTypeIsAnUnsupportedMediaTypeProblem() {
        post("/rest/square/unary/7", null, DEEP_7)
                .expectStatus()
                .isEqualTo(415)
                .expectBody(String.class)
                .isEqualTo("{\"type\":\"about:blank\",\"title\":\"Unsupported Media Type\",\"status\":415,"
                        + "\"detail\":\"Content-Type is missing: a payload is application/json\","
                        + "\"instance\":\"/rest/square/unary/7\"}");
    }

    @ParameterizedTest
    @CsvSource(textBlock = SquareCases.NOT_INT32_POSTED)
    void aBadNumberIsABadRequestProblemAsForGet(String number) {
        post("/rest/square/unary/" + number, "application/json", DEEP_7)
                .expectStatus()
                .isBadRequest()
                .expectBody(String.class)
                .isEqualTo("{\"type\":\"about:blank\",\"title\":\"Bad Request\",\"status\":400,"
                        + "\"detail\":\"number must be a 32-bit signed integer (from -2147483648 to 2147483647),"
                        + " got '" + number + "'\",\"instance\":\"/rest/square/unary/" + number + "\"}");
    }

    /** The body as bytes, so that the client adds no Content-Type of its own when {@code contentType} is null. */
    private WebTestClient.ResponseSpec post(String path, String contentType, String body) {
        WebTestClient.RequestBodySpec request = client.post().uri(path);
        if (contentType != null) {
            request.header("Content-Type", contentType);
        }
        return request.bodyValue(body.getBytes(StandardCharsets.UTF_8)).exchange();
    }
}
