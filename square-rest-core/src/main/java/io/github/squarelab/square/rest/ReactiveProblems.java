package io.github.squarelab.square.rest;

import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication.Type;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.ResponseEntity;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.web.bind.annotation.ControllerAdvice;
import org.springframework.web.reactive.result.method.annotation.ResponseEntityExceptionHandler;
import org.springframework.web.server.ResponseStatusException;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;

/**
 * Boot's WebFlux problem details (spring.webflux.problemdetails.enabled backs off for this), with the detail of an
 * unknown path that Spring MVC gives on Tomcat and Jetty: WebFlux's 404 has none.
 */
@ControllerAdvice
@ConditionalOnWebApplication(type = Type.REACTIVE)
class ReactiveProblems extends ResponseEntityExceptionHandler {

    @Override
    protected Mono<ResponseEntity<Object>> handleResponseStatusException(
            ResponseStatusException ex, HttpHeaders headers, HttpStatusCode status, ServerWebExchange exchange) {
        if (status.isSameCodeAs(HttpStatus.NOT_FOUND) && ex.getBody().getDetail() == null) {
            ServerHttpRequest request = exchange.getRequest();
            ex.setDetail(
                    SquareCalls.noEndpoint(request.getMethod(), request.getURI().getRawPath()));
        }
        return super.handleResponseStatusException(ex, headers, status, exchange);
    }
}
