package io.github.squarelab.square.rest;

import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.head;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.options;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.request;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.content;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.jsonPath;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.autoconfigure.web.servlet.WebMvcTest;
import org.springframework.context.annotation.Import;
import org.springframework.http.HttpMethod;
import org.springframework.http.MediaType;
import org.springframework.test.web.servlet.MockMvc;

@WebMvcTest(properties = "square.server=tomcat")
@Import(SquareRoutes.class)
class SquareRoutesTests {

    @Autowired
    private MockMvc mvc;

    @ParameterizedTest
    @CsvSource(textBlock = SquareCases.SQUARES)
    void answersTheSquareAsABareJsonNumber(String number, String square) throws Exception {
        mvc.perform(get("/rest/square/unary/{number}", number))
                .andExpect(status().isOk())
                .andExpect(content().contentType(MediaType.APPLICATION_JSON))
                .andExpect(content().string(square));
    }

    @ParameterizedTest
    @CsvSource(textBlock = SquareCases.NOT_INT32)
    void rejectsAnythingButA32BitIntegerWithAProblem(String number) throws Exception {
        mvc.perform(get("/rest/square/unary/{number}", number))
                .andExpect(status().isBadRequest())
                .andExpect(content().contentType(MediaType.APPLICATION_PROBLEM_JSON))
                .andExpect(jsonPath("$.type").value("about:blank"))
                .andExpect(jsonPath("$.title").value("Bad Request"))
                .andExpect(jsonPath("$.status").value(400))
                .andExpect(jsonPath("$.detail")
                        .value("number must be a 32-bit signed integer (from -2147483648 to 2147483647), got '" + number
                                + "'"));
    }

    @Test
    void headAnswersAsGetDoesAndOptionsListsTheMethods() throws Exception {
        mvc.perform(head("/rest/square/unary/7"))
                .andExpect(status().isOk())
                .andExpect(content().contentType(MediaType.APPLICATION_JSON));
        mvc.perform(options("/rest/square/unary/7"))
                .andExpect(status().isOk())
                .andExpect(header().string("Allow", "GET,HEAD,POST,OPTIONS"));
    }

    @Test
    void aProblemNamesThePathItIsAbout() throws Exception {
        mvc.perform(get("/rest/square/unary/abc"))
                .andExpect(status().isBadRequest())
                .andExpect(jsonPath("$.instance").value("/rest/square/unary/abc"));
    }

    @Test
    void unknownPathIsANotFoundProblem() throws Exception {
        mvc.perform(get("/rest/square/binary/7"))
                .andExpect(status().isNotFound())
                .andExpect(content().contentType(MediaType.APPLICATION_PROBLEM_JSON))
                .andExpect(jsonPath("$.status").value(404))
                .andExpect(jsonPath("$.title").value("Not Found"))
                .andExpect(jsonPath("$.detail").value("No endpoint GET /rest/square/binary/7."));
    }

    @ParameterizedTest
    @CsvSource(textBlock = SquareCases.OTHER_METHODS)
    void otherMethodsAreRefusedWithAProblem(String method) throws Exception {
        mvc.perform(request(HttpMethod.valueOf(method), "/rest/square/unary/7"))
                .andExpect(status().isMethodNotAllowed())
                .andExpect(content().contentType(MediaType.APPLICATION_PROBLEM_JSON))
                .andExpect(header().string("Allow", "GET,HEAD,POST,OPTIONS"))
                .andExpect(content()
                        .string("{\"type\":\"about:blank\",\"title\":\"Method Not Allowed\",\"status\":405,"
                                + "\"detail\":\"Method '" + method + "' is not supported.\","
                                + "\"instance\":\"/rest/square/unary/7\"}"));
    }
}
