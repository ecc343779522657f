package io.github.squarelab.aggregator.fanout;

import org.springframework.http.HttpStatus;

/**
 * A square service failed to answer. Each transport client translates its own errors into one of these
 * kinds, so that the fan-out and the HTTP layer need to know nothing about the transport.
 */
public class DownstreamException extends RuntimeException {

    /** What went wrong, and the status the aggregator answers with. */
    public enum Kind {
        /** The service could not be reached or went away: 503. */
        UNAVAILABLE(HttpStatus.SERVICE_UNAVAILABLE),
        /** No complete answer within a deadline: 504. */
        TIMEOUT(HttpStatus.GATEWAY_TIMEOUT),
        /** An answer came, but a wrong one, an error, or too few: 502. */
        BAD_ANSWER(HttpStatus.BAD_GATEWAY);

        private final HttpStatus status;

        Kind(HttpStatus status) {
            this.status = status;
        }

        public HttpStatus status() {
            return status;
        }
    }

    private final Kind kind;

    public DownstreamException(Kind kind, String message) {
        this(kind, message, null);
    }

    public DownstreamException(Kind kind, String message, Throwable cause) {
        super(message, cause);
        this.kind = kind;
    }

    public Kind kind() {
        return kind;
    }
}
