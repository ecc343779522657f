package io.github.squarelab.square.rest;

import static io.github.squarelab.square.rest.SquareCalls.ALLOWED;
import static io.github.squarelab.square.rest.SquareCalls.MAX_BODY_BYTES;
import static io.github.squarelab.square.rest.SquareCalls.PATH;

import io.github.squarelab.payload.InvalidPayloadException;
import java.io.IOException;
import java.io.InputStream;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication.Type;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.web.servlet.function.RequestPredicates;
import org.springframework.web.servlet.function.RouterFunction;
import org.springframework.web.servlet.function.RouterFunctions;
import org.springframework.web.servlet.function.ServerRequest;
import org.springframework.web.servlet.function.ServerResponse;

/**
 * {@code GET /rest/square/unary/{number}} (the bare JSON square) and its {@code POST} with a payload (the square and
 * the payload echoed, read strictly), as a functional MVC route with {@link SquareCalls}' answers and RFC 9457 problems:
 * an annotated controller spent half the CPU on dispatch (docs/performance.md, "The REST service's route").
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnWebApplication(type = Type.SERVLET)
class SquareRoutes {

    @Bean
    RouterFunction<ServerResponse> squareRoute() {
        return RouterFunctions.route()
                .GET(PATH, SquareRoutes::square)
                // HEAD as GET (the server drops the body), and OPTIONS, as the annotated controller answered them.
                .HEAD(PATH, SquareRoutes::square)
                .POST(PATH, SquareRoutes::echo)
                .OPTIONS(PATH, request -> ServerResponse.ok().allow(ALLOWED).build())
                .route(RequestPredicates.path(PATH), request -> {
                    ProblemDetail problem = SquareCalls.methodNotAllowed(request.method(), path(request));
                    return problem(problem).allow(ALLOWED).body(problem);
                })
                .onError(InvalidNumberException.class, (e, request) -> {
                    ProblemDetail problem = SquareCalls.badNumber((InvalidNumberException) e, path(request));
                    return problem(problem).body(problem);
                })
                .onError(InvalidPayloadException.class, (e, request) -> {
                    ProblemDetail problem = SquareCalls.notAPayload((InvalidPayloadException) e, path(request));
                    return problem(problem).body(problem);
                })
                .onError(UnsupportedBodyTypeException.class, (e, request) -> {
                    ProblemDetail problem =
                            SquareCalls.unsupportedBodyType((UnsupportedBodyTypeException) e, path(request));
                    return problem(problem)
                            .header(HttpHeaders.ACCEPT, MediaType.APPLICATION_JSON_VALUE)
                            .body(problem);
                })
                .build();
    }

    private static ServerResponse square(ServerRequest request) {
        int value = SquareCalls.parseInt32(request.pathVariable("number"));
        return ServerResponse.ok().contentType(MediaType.APPLICATION_JSON).body(SquareCalls.square(value));
    }

    private static ServerResponse echo(ServerRequest request) throws IOException, InvalidPayloadException {
        SquareCalls.requireJson(request.headers().firstHeader(HttpHeaders.CONTENT_TYPE));
        int value = SquareCalls.parseInt32(request.pathVariable("number"));
        byte[] answer = SquareCalls.echo(value, body(request));
        return ServerResponse.ok().contentType(MediaType.APPLICATION_JSON).body(answer);
    }

    /** The whole body, refused unread past {@link SquareCalls#MAX_BODY_BYTES}. */
    private static byte[] body(ServerRequest request) throws IOException, InvalidPayloadException {
        if (request.headers().contentLength().orElse(0) > MAX_BODY_BYTES) {
            throw SquareCalls.tooLarge();
        }
        try (InputStream in = request.servletRequest().getInputStream()) {
            byte[] body = in.readNBytes(MAX_BODY_BYTES + 1);
            if (body.length > MAX_BODY_BYTES) {
                throw SquareCalls.tooLarge();
            }
            return body;
        }
    }

    /** The problem's status and type; its body is the problem itself. */
    private static ServerResponse.BodyBuilder problem(ProblemDetail problem) {
        return ServerResponse.status(problem.getStatus()).contentType(MediaType.APPLICATION_PROBLEM_JSON);
    }

    private static String path(ServerRequest request) {
        return request.uri().getRawPath();
    }
}
