package io.github.squarelab.aggregator.web;

import io.github.squarelab.aggregator.admission.OverloadedException;
import io.github.squarelab.aggregator.fanout.DownstreamException;
import io.github.squarelab.aggregator.fanout.InvalidCountException;
import io.github.squarelab.payload.UnknownShapeException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;
import org.springframework.web.servlet.mvc.method.annotation.ResponseEntityExceptionHandler;

/**
 * Every error the aggregator answers is an RFC 9457 problem whose detail says what went wrong: Spring's
 * own (unknown path, wrong method) through {@link ResponseEntityExceptionHandler}, ours below, and a
 * last resort that never shows a stack trace.
 */
@RestControllerAdvice
class ProblemHandler extends ResponseEntityExceptionHandler {

    private static final Logger log = LoggerFactory.getLogger(ProblemHandler.class);

    @ExceptionHandler
    ProblemDetail invalidCount(InvalidCountException e) {
        return ProblemDetail.forStatusAndDetail(HttpStatus.BAD_REQUEST, e.getMessage());
    }

    /** {@code ?payload=} named no shape: the detail lists them. */
    @ExceptionHandler
    ProblemDetail unknownShape(UnknownShapeException e) {
        return ProblemDetail.forStatusAndDetail(HttpStatus.BAD_REQUEST, e.getMessage());
    }

    @ExceptionHandler
    ProblemDetail downstreamFailed(DownstreamException e) {
        log.debug("Fan-out failed", e);
        return ProblemDetail.forStatusAndDetail(e.kind().status(), e.getMessage());
    }

    @ExceptionHandler
    ResponseEntity<ProblemDetail> overloaded(OverloadedException e) {
        return ResponseEntity.status(HttpStatus.SERVICE_UNAVAILABLE)
                .header(HttpHeaders.RETRY_AFTER, Long.toString(e.retryAfterSeconds()))
                .body(ProblemDetail.forStatusAndDetail(HttpStatus.SERVICE_UNAVAILABLE, e.getMessage()));
    }

    @ExceptionHandler
    ProblemDetail unexpected(Exception e) {
        log.error("Unexpected failure", e);
        return ProblemDetail.forStatusAndDetail(
                HttpStatus.INTERNAL_SERVER_ERROR, "the aggregator failed unexpectedly; its log has the details");
    }
}
