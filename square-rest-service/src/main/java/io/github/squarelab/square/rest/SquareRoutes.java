package io.github.squarelab.square.rest;

import java.net.URI;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.web.servlet.function.RequestPredicates;
import org.springframework.web.servlet.function.RouterFunction;
import org.springframework.web.servlet.function.RouterFunctions;
import org.springframework.web.servlet.function.ServerRequest;
import org.springframework.web.servlet.function.ServerResponse;

/**
 * {@code GET /rest/square/unary/{number}}: the bare JSON number {@code number * number}.
 *
 * <p>A functional route rather than an annotated controller: this one call is the whole hot path of the
 * REST downstream, and the annotated one spent about half of the service's CPU samples (JFR) on dispatch
 * that a single fixed route does not need (argument resolvers, a reflective call, content negotiation over
 * the Accept header, Jackson for one number). The answer is written as a string with its Content-Length
 * rather than chunked, and always as JSON: an Accept header that excludes JSON no longer gets a 406.
 * Measured in docs/performance.md.
 *
 * <p>Bad numbers and other methods on this path are RFC 9457 problems written here; unknown paths are
 * turned into problems by Spring itself ({@code spring.mvc.problemdetails.enabled}).
 */
@Configuration(proxyBeanMethods = false)
class SquareRoutes {

    static final String PATH = "/rest/square/unary/{number}";

    private static final HttpMethod[] ALLOWED = {HttpMethod.GET, HttpMethod.HEAD, HttpMethod.OPTIONS};

    @Bean
    RouterFunction<ServerResponse> squareRoute() {
        return RouterFunctions.route()
                .GET(PATH, SquareRoutes::square)
                // HEAD as GET (Tomcat drops the body), and OPTIONS, as the annotated controller answered them.
                .HEAD(PATH, SquareRoutes::square)
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
                .build();
    }

    private static ServerResponse square(ServerRequest request) {
        int value = parseInt32(request.pathVariable("number"));
        // Widen before multiplying: squares above 2^31 must stay correct.
        return ServerResponse.ok().contentType(MediaType.APPLICATION_JSON).body(Long.toString((long) value * value));
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
