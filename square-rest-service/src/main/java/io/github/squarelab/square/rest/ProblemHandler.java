package io.github.squarelab.square.rest;

import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;

/**
 * Bad input becomes an RFC 9457 problem. Framework errors (unknown path, wrong method) are turned into
 * problems by Spring itself, through {@code spring.mvc.problemdetails.enabled}.
 */
@RestControllerAdvice
class ProblemHandler {

    @ExceptionHandler
    ProblemDetail invalidNumber(InvalidNumberException e) {
        return ProblemDetail.forStatusAndDetail(HttpStatus.BAD_REQUEST, e.getMessage());
    }
}
