package io.github.squarelab.aggregator.grpc;

import io.github.squarelab.aggregator.fanout.DownstreamException;
import io.github.squarelab.aggregator.fanout.DownstreamException.Kind;
import io.github.squarelab.aggregator.tls.TlsFailures;
import io.grpc.Status;
import java.nio.channels.ClosedChannelException;
import java.time.Duration;
import java.util.Optional;

/** The one place where gRPC statuses become the fan-out's failure kinds. */
final class GrpcFailures {

    private GrpcFailures() {}

    /**
     * @param target the square service's address, for the message
     * @param deadline the deadline the call had, and the property that set it, for the message
     */
    static DownstreamException translate(Throwable error, String target, Duration deadline, String deadlineProperty) {
        return translate(error, target, deadline, deadlineProperty, false);
    }

    /**
     * @param plaintextNeverAnswered the channel is plaintext and no call on it has had an answer yet, as with a TLS port
     */
    static DownstreamException translate(
            Throwable error,
            String target,
            Duration deadline,
            String deadlineProperty,
            boolean plaintextNeverAnswered) {
        Status status = Status.fromThrowable(error);
        String description = status.getDescription() != null ? ": " + status.getDescription() : "";
        return switch (code(error)) {
            case UNAVAILABLE -> unavailable(error, target, description, plaintextNeverAnswered);
            case DEADLINE_EXCEEDED ->
                new DownstreamException(
                        Kind.TIMEOUT,
                        "no complete answer from the gRPC square service at " + target + " within "
                                + deadline.toMillis() + " ms (" + deadlineProperty + ")",
                        error);
            default ->
                new DownstreamException(
                        Kind.BAD_ANSWER,
                        "the gRPC square service at " + target + " answered " + status.getCode() + description,
                        error);
        };
    }

    private static DownstreamException unavailable(
            Throwable error, String target, String description, boolean plaintextNeverAnswered) {
        Optional<String> tls = TlsFailures.handshake(error);
        if (tls.isPresent()) {
            return new DownstreamException(
                    Kind.UNAVAILABLE,
                    "the gRPC square service at " + target + " failed the TLS handshake: " + tls.get(),
                    error);
        }
        // A connection made and then closed, never answered: as a TLS port closes a plaintext one.
        boolean closedUnderIt = plaintextNeverAnswered && !TlsFailures.refused(error);
        return new DownstreamException(
                Kind.UNAVAILABLE,
                "the gRPC square service at " + target + " is unavailable" + description
                        + (closedUnderIt ? TlsFailures.PLAINTEXT_HINT : ""),
                error);
    }

    /**
     * The status code of a failed call, where a connection that closed under it counts as UNAVAILABLE: grpc-netty
     * reports a write on a channel already closed (a connection reset by the peer) as UNKNOWN "channel closed", which
     * is the network failing, not the square service answering wrongly.
     */
    static Status.Code code(Throwable error) {
        Status.Code code = Status.fromThrowable(error).getCode();
        return code == Status.Code.UNKNOWN && closedChannel(error) ? Status.Code.UNAVAILABLE : code;
    }

    private static boolean closedChannel(Throwable error) {
        for (Throwable cause = error; cause != null; cause = cause.getCause()) {
            if (cause instanceof ClosedChannelException) {
                return true;
            }
            if (cause.getCause() == cause) {
                return false;
            }
        }
        return false;
    }

    static DownstreamException badAnswer(String target, String what) {
        return new DownstreamException(Kind.BAD_ANSWER, "the gRPC square service at " + target + " answered " + what);
    }
}
