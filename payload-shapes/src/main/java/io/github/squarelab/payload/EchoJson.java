package io.github.squarelab.payload;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import com.fasterxml.jackson.annotation.JsonSetter;
import com.fasterxml.jackson.annotation.Nulls;

/**
 * The REST square service's answer to {@code POST /rest/square/unary/{number}}: the square, and the payload of the
 * body echoed, {@code {"result":49,"payload":{"deep":{...}}}}.
 */
@JsonPropertyOrder({"result", "payload"})
public record EchoJson(
        @JsonProperty(required = true) long result,
        @JsonProperty(required = true) @JsonSetter(nulls = Nulls.FAIL) PayloadJson payload) {}
