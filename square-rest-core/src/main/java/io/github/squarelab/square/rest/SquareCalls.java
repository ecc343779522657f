package io.github.squarelab.square.rest;

import io.github.squarelab.payload.EchoJson;
import io.github.squarelab.payload.InvalidPayloadException;
import io.github.squarelab.payload.PayloadJsonCodec;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.http.InvalidMediaTypeException;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;

/**
 * What the square endpoint answers, whichever stack serves it: the MVC routes ({@link SquareRoutes}, Tomcat and
 * Jetty) and the WebFlux ones ({@link SquareReactiveRoutes}, Reactor Netty) only read the request and write these.
 */
final class SquareCalls {

    static final String PATH = "/rest/square/unary/{number}";

    /**
     * More than any payload takes even pretty-printed (the largest, a collection for a 10-digit number, is about
     * 9 KB compact): a larger body is refused before it is parsed, so that no request can fill the heap.
     */
    static final int MAX_BODY_BYTES = 64 * 1024;

    static final HttpMethod[] ALLOWED = {HttpMethod.GET, HttpMethod.HEAD, HttpMethod.POST, HttpMethod.OPTIONS};

    private SquareCalls() {}

    /** The bare JSON number: bytes with a length, not a string for a JSON encoder to quote. */
    static byte[] square(int value) {
        // Widen before multiplying: squares above 2^31 must stay correct.
        return Long.toString((long) value * value).getBytes(StandardCharsets.US_ASCII);
    }

    /**
     * The square and the payload of the body, read strictly and written again; the values are not checked against
     * the number: the service echoes, the caller checks.
     */
    static byte[] echo(int value, byte[] body) throws InvalidPayloadException {
        return PayloadJsonCodec.write(new EchoJson((long) value * value, PayloadJsonCodec.readPayload(body)));
    }

    /** application/json, whatever its parameters (a charset, typically); anything else is a 415 naming the type. */
    static void requireJson(String contentType) {
        if (contentType == null) {
            throw new UnsupportedBodyTypeException(null);
        }
        MediaType type;
        try {
            type = MediaType.parseMediaType(contentType);
        } catch (InvalidMediaTypeException e) {
            throw new UnsupportedBodyTypeException(contentType);
        }
        if (!MediaType.APPLICATION_JSON.equalsTypeAndSubtype(type)) {
            throw new UnsupportedBodyTypeException(type.getType() + "/" + type.getSubtype());
        }
    }

    static InvalidPayloadException tooLarge() {
        return PayloadJsonCodec.tooLarge(MAX_BODY_BYTES);
    }

    static ProblemDetail badNumber(InvalidNumberException e, String rawPath) {
        return problem(HttpStatus.BAD_REQUEST, e.getMessage(), rawPath);
    }

    static ProblemDetail notAPayload(InvalidPayloadException e, String rawPath) {
        return problem(
                HttpStatus.BAD_REQUEST,
                "the body is not a payload of a known shape (wide, deep, collection): " + e.getMessage(),
                rawPath);
    }

    static ProblemDetail unsupportedBodyType(UnsupportedBodyTypeException e, String rawPath) {
        return problem(HttpStatus.UNSUPPORTED_MEDIA_TYPE, e.getMessage(), rawPath);
    }

    static ProblemDetail methodNotAllowed(HttpMethod method, String rawPath) {
        return problem(HttpStatus.METHOD_NOT_ALLOWED, "Method '" + method + "' is not supported.", rawPath);
    }

    /** As Spring MVC words its 404 (NoHandlerFoundException), for WebFlux, which gives none. */
    static String noEndpoint(HttpMethod method, String rawPath) {
        return "No endpoint " + method + " " + rawPath + ".";
    }

    /** A problem shaped like the ones Spring writes for its own errors. */
    private static ProblemDetail problem(HttpStatus status, String detail, String rawPath) {
        ProblemDetail problem = ProblemDetail.forStatusAndDetail(status, detail);
        problem.setInstance(URI.create(rawPath));
        return problem;
    }

    /** Parsed here rather than bound as an int so that the 400 says exactly what was wrong. */
    static int parseInt32(String text) {
        try {
            return Integer.parseInt(text);
        } catch (NumberFormatException e) {
            throw new InvalidNumberException(text);
        }
    }
}
