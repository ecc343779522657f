package io.github.squarelab.square.rest;

import io.github.squarelab.payload.EchoJson;
import io.github.squarelab.payload.InvalidPayloadException;
import io.github.squarelab.payload.PayloadJson;
import io.github.squarelab.payload.PayloadJsonCodec;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.http.InvalidMediaTypeException;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.web.servlet.function.RequestPredicates;
import org.springframework.web.servlet.function.RouterFunction;
import org.springframework.web.servlet.function.RouterFunctions;
import org.springframework.web.servlet.function.ServerRequest;
import org.springframework.web.servlet.function.ServerResponse;

/**
 * {@code GET /rest/square/unary/{number}}: the bare JSON number {@code number * number}; {@code POST} of the same
 * path with a payload of a known shape as its JSON body: {@code {"result":<number * number>,"payload":<the same
 * payload>}}.
 *
 * <p>A functional route rather than an annotated controller: this one call is the whole hot path of the
 * REST downstream, and the annotated one spent about half of the service's CPU samples (JFR) on dispatch
 * that a single fixed route does not need (argument resolvers, a reflective call, content negotiation over
 * the Accept header, Jackson for one number). The answer is written as a string with its Content-Length
 * rather than chunked, and always as JSON: an Accept header that excludes JSON no longer gets a 406.
 * Measured in docs/performance.md. GET is the first route, so a POST route costs it nothing.
 *
 * <p>POST reads its body strictly (payload-shapes' {@link PayloadJsonCodec}: unknown keys, missing or null values,
 * wrong counts, two shapes, anything but JSON are refused) into records and writes them back with Jackson, as a
 * real service would; the values are not checked against the number: the service echoes, the caller checks.
 *
 * <p>Bad numbers, bad bodies, other content types and other methods on this path are RFC 9457 problems written
 * here; unknown paths are turned into problems by Spring itself ({@code spring.mvc.problemdetails.enabled}).
 */
@Configuration(proxyBeanMethods = false)
class SquareRoutes {

    static final String PATH = "/rest/square/unary/{number}";

    /**
     * More than any payload takes even pretty-printed (the largest, a collection for a 10-digit number, is about
     * 9 KB compact): a larger body is refused before it is parsed, so that no request can fill the heap.
     */
    static final int MAX_BODY_BYTES = 64 * 1024;

    private static final HttpMethod[] ALLOWED = {HttpMethod.GET, HttpMethod.HEAD, HttpMethod.POST, HttpMethod.OPTIONS};

    @Bean
    RouterFunction<ServerResponse> squareRoute() {
        return RouterFunctions.route()
                .GET(PATH, SquareRoutes::square)
                // HEAD as GET (Tomcat drops the body), and OPTIONS, as the annotated controller answered them.
                .HEAD(PATH, SquareRoutes::square)
                .POST(PATH, SquareRoutes::echo)
                .OPTIONS(PATH, request -> ServerResponse.ok().allow(ALLOWED).build())
                .route(RequestPredicates.path(PATH), request -> ServerResponse.status(HttpStatus.METHOD_NOT_ALLOWED)
                        .allow(ALLOWED)
                        .contentType(MediaType.APPLICATION_PROBLEM_JSON)
                        .body(problem(
                                request,
                                HttpStatus.METHOD_NOT_ALLOWED,
                                "Method '" + request.method() + "' is not supported.")))
                .onError(InvalidNumberException.class, (e, request) -> ServerResponse.badRequest()
                        .contentType(MediaType.APPLICATION_PROBLEM_JSON)
                        .body(problem(request, HttpStatus.BAD_REQUEST, e.getMessage())))
                .onError(InvalidPayloadException.class, (e, request) -> ServerResponse.badRequest()
                        .contentType(MediaType.APPLICATION_PROBLEM_JSON)
                        .body(problem(
                                request,
                                HttpStatus.BAD_REQUEST,
                                "the body is not a payload of a known shape (wide, deep, collection): "
                                        + e.getMessage())))
                .onError(UnsupportedBodyTypeException.class, (e, request) -> ServerResponse.status(
                                HttpStatus.UNSUPPORTED_MEDIA_TYPE)
                        .header(HttpHeaders.ACCEPT, MediaType.APPLICATION_JSON_VALUE)
                        .contentType(MediaType.APPLICATION_PROBLEM_JSON)
                        .body(problem(request, HttpStatus.UNSUPPORTED_MEDIA_TYPE, e.getMessage())))
                .build();
    }

    private static ServerResponse square(ServerRequest request) {
        int value = parseInt32(request.pathVariable("number"));
        // Widen before multiplying: squares above 2^31 must stay correct.
        return ServerResponse.ok().contentType(MediaType.APPLICATION_JSON).body(Long.toString((long) value * value));
    }

    /** The square and the payload of the body, read and written again. */
    private static ServerResponse echo(ServerRequest request) throws IOException, InvalidPayloadException {
        requireJson(request);
        int value = parseInt32(request.pathVariable("number"));
        PayloadJson payload = PayloadJsonCodec.readPayload(body(request));
        byte[] answer = PayloadJsonCodec.write(new EchoJson((long) value * value, payload));
        return ServerResponse.ok().contentType(MediaType.APPLICATION_JSON).body(answer);
    }

    /** application/json, whatever its parameters (a charset, typically); anything else is a 415 naming the type. */
    private static void requireJson(ServerRequest request) {
        String header = request.headers().firstHeader(HttpHeaders.CONTENT_TYPE);
        if (header == null) {
            throw new UnsupportedBodyTypeException(null);
        }
        MediaType type;
        try {
            type = MediaType.parseMediaType(header);
        } catch (InvalidMediaTypeException e) {
            throw new UnsupportedBodyTypeException(header);
        }
        if (!MediaType.APPLICATION_JSON.equalsTypeAndSubtype(type)) {
            throw new UnsupportedBodyTypeException(type.getType() + "/" + type.getSubtype());
        }
    }

    /** The whole body, refused unread past {@link #MAX_BODY_BYTES}. */
    private static byte[] body(ServerRequest request) throws IOException, InvalidPayloadException {
        if (request.headers().contentLength().orElse(0) > MAX_BODY_BYTES) {
            throw tooLarge();
        }
        try (InputStream in = request.servletRequest().getInputStream()) {
            byte[] body = in.readNBytes(MAX_BODY_BYTES + 1);
            if (body.length > MAX_BODY_BYTES) {
                throw tooLarge();
            }
            return body;
        }
    }

    private static InvalidPayloadException tooLarge() {
        return PayloadJsonCodec.tooLarge(MAX_BODY_BYTES);
    }

    /** A problem shaped like the ones Spring writes for its own errors. */
    private static ProblemDetail problem(ServerRequest request, HttpStatus status, String detail) {
        ProblemDetail problem = ProblemDetail.forStatusAndDetail(status, detail);
        problem.setInstance(URI.create(request.uri().getRawPath()));
        return problem;
    }

    /** Parsed here rather than bound as an int so that the 400 says exactly what was wrong. */
    private static int parseInt32(String text) {
        try {
            return Integer.parseInt(text);
        } catch (NumberFormatException e) {
            throw new InvalidNumberException(text);
        }
    }
}
