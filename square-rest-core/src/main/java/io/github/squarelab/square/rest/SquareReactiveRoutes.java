package io.github.squarelab.square.rest;

import static io.github.squarelab.square.rest.SquareCalls.ALLOWED;
import static io.github.squarelab.square.rest.SquareCalls.MAX_BODY_BYTES;
import static io.github.squarelab.square.rest.SquareCalls.PATH;

import io.github.squarelab.payload.InvalidPayloadException;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication.Type;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferLimitException;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.web.reactive.function.BodyExtractors;
import org.springframework.web.reactive.function.server.RequestPredicates;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;
import reactor.core.publisher.Mono;

/**
 * {@link SquareRoutes}' twin for WebFlux (square.server=netty), answering from {@link SquareCalls}; the body is joined
 * in memory (bounded) and parsed from bytes, so nothing blocks the event loop.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnWebApplication(type = Type.REACTIVE)
class SquareReactiveRoutes {

    private static final byte[] NO_BODY = {};

    @Bean
    RouterFunction<ServerResponse> reactiveSquareRoute() {
        return RouterFunctions.route()
                // Deferred: onError only sees errors signalled by the Mono, not those thrown while building it.
                .GET(PATH, request -> Mono.defer(() -> square(request)))
                .HEAD(PATH, request -> Mono.defer(() -> square(request)))
                .POST(PATH, request -> Mono.defer(() -> echo(request)))
                .OPTIONS(PATH, request -> ServerResponse.ok().allow(ALLOWED).build())
                .route(RequestPredicates.path(PATH), request -> {
                    ProblemDetail problem = SquareCalls.methodNotAllowed(request.method(), path(request));
                    return problem(problem).allow(ALLOWED).bodyValue(problem);
                })
                .onError(InvalidNumberException.class, (e, request) -> {
                    ProblemDetail problem = SquareCalls.badNumber((InvalidNumberException) e, path(request));
                    return problem(problem).bodyValue(problem);
                })
                .onError(InvalidPayloadException.class, (e, request) -> {
                    ProblemDetail problem = SquareCalls.notAPayload((InvalidPayloadException) e, path(request));
                    return problem(problem).bodyValue(problem);
                })
                .onError(UnsupportedBodyTypeException.class, (e, request) -> {
                    ProblemDetail problem =
                            SquareCalls.unsupportedBodyType((UnsupportedBodyTypeException) e, path(request));
                    return problem(problem)
                            .header(HttpHeaders.ACCEPT, MediaType.APPLICATION_JSON_VALUE)
                            .bodyValue(problem);
                })
                .build();
    }

    private static Mono<ServerResponse> square(ServerRequest request) {
        int value = SquareCalls.parseInt32(request.pathVariable("number"));
        return ServerResponse.ok().contentType(MediaType.APPLICATION_JSON).bodyValue(SquareCalls.square(value));
    }

    private static Mono<ServerResponse> echo(ServerRequest request) {
        SquareCalls.requireJson(request.headers().firstHeader(HttpHeaders.CONTENT_TYPE));
        int value = SquareCalls.parseInt32(request.pathVariable("number"));
        if (request.headers().contentLength().orElse(0) > MAX_BODY_BYTES) {
            return Mono.error(SquareCalls.tooLarge());
        }
        return body(request).flatMap(body -> {
            try {
                return ServerResponse.ok()
                        .contentType(MediaType.APPLICATION_JSON)
                        .bodyValue(SquareCalls.echo(value, body));
            } catch (InvalidPayloadException e) {
                return Mono.error(e);
            }
        });
    }

    /** The whole body, refused past {@link SquareCalls#MAX_BODY_BYTES} as soon as it gets there. */
    private static Mono<byte[]> body(ServerRequest request) {
        return DataBufferUtils.join(request.body(BodyExtractors.toDataBuffers()), MAX_BODY_BYTES)
                .map(SquareReactiveRoutes::bytes)
                .defaultIfEmpty(NO_BODY)
                .onErrorMap(DataBufferLimitException.class, e -> SquareCalls.tooLarge());
    }

    private static byte[] bytes(DataBuffer buffer) {
        try {
            byte[] bytes = new byte[buffer.readableByteCount()];
            buffer.read(bytes);
            return bytes;
        } finally {
            DataBufferUtils.release(buffer);
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
