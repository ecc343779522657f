package io.github.squarelab.aggregator.grpc;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.squarelab.aggregator.fanout.DownstreamException;
import io.github.squarelab.aggregator.fanout.DownstreamException.Kind;
import io.grpc.Status;
import java.net.ConnectException;
import java.nio.channels.ClosedChannelException;
import java.time.Duration;
import javax.net.ssl.SSLHandshakeException;
import org.junit.jupiter.api.Test;
import org.springframework.http.HttpStatus;

/**
 * How a failed gRPC call becomes the aggregator's answer. The statuses are the ones grpc-netty reports; the lab's fault
 * run (loadtest/lab/faults.py, reset_peer between the aggregator and the square service) showed the first one as a 502.
 */
class GrpcFailuresTests {

    private static final Duration DEADLINE = Duration.ofSeconds(5);

    @Test
    void aConnectionResetUnderACallIsUnavailableNotABadAnswer() {
        // What grpc-netty's Utils.statusFromThrowable makes of a write on a channel the peer has reset.
        Throwable reset = Status.UNKNOWN
                .withDescription("channel closed")
                .withCause(new ClosedChannelException())
                .asRuntimeException();

        DownstreamException failure = GrpcFailures.translate(reset, "127.0.0.1:6565", DEADLINE, "aggregator.deadline");

        assertThat(failure.kind()).isEqualTo(Kind.UNAVAILABLE);
        assertThat(failure.kind().status()).isEqualTo(HttpStatus.SERVICE_UNAVAILABLE);
        assertThat(failure.getMessage())
                .isEqualTo("the gRPC square service at 127.0.0.1:6565 is unavailable: channel closed");
        assertThat(GrpcFailures.code(reset)).isEqualTo(Status.Code.UNAVAILABLE);
    }

    @Test
    void aClosedChannelDeeperInTheCausesCountsToo() {
        Throwable reset = Status.UNKNOWN
                .withDescription("channel closed")
                .withCause(new IllegalStateException("write failed", new ClosedChannelException()))
                .asRuntimeException();

        assertThat(GrpcFailures.code(reset)).isEqualTo(Status.Code.UNAVAILABLE);
    }

    @Test
    void anUnknownStatusFromTheServiceItselfStaysABadAnswer() {
        Throwable unknown = Status.UNKNOWN.withDescription("boom").asRuntimeException();

        DownstreamException failure =
                GrpcFailures.translate(unknown, "127.0.0.1:6565", DEADLINE, "aggregator.deadline");

        assertThat(failure.kind()).isEqualTo(Kind.BAD_ANSWER);
        assertThat(failure.getMessage()).isEqualTo("the gRPC square service at 127.0.0.1:6565 answered UNKNOWN: boom");
        assertThat(GrpcFailures.code(unknown)).isEqualTo(Status.Code.UNKNOWN);
    }

    @Test
    void aDeadlineIsATimeoutThatNamesItsProperty() {
        Throwable late = Status.DEADLINE_EXCEEDED.asRuntimeException();

        DownstreamException failure = GrpcFailures.translate(late, "127.0.0.1:6565", DEADLINE, "aggregator.deadline");

        assertThat(failure.kind()).isEqualTo(Kind.TIMEOUT);
        assertThat(failure.getMessage())
                .isEqualTo("no complete answer from the gRPC square service at 127.0.0.1:6565 within 5000 ms "
                        + "(aggregator.deadline)");
    }

    @Test
    void aTlsHandshakeFailureNamesItsCauseNotTheChannelPipeline() {
        Throwable untrusted = Status.UNAVAILABLE
                .withDescription("io exception\nChannel Pipeline: [SslHandler#0, ...]")
                .withCause(new SSLHandshakeException("PKIX path building failed"))
                .asRuntimeException();

        assertThat(GrpcFailures.translate(untrusted, "127.0.0.1:6565", DEADLINE, "aggregator.deadline")
                        .getMessage())
                .isEqualTo(
                        "the gRPC square service at 127.0.0.1:6565 failed the TLS handshake: PKIX path building failed");
    }

    @Test
    void aPlaintextChannelClosedBeforeItsFirstAnswerSaysWhatATlsPortNeedsAndOnlyThen() {
        Throwable closed = Status.UNAVAILABLE
                .withDescription("Network closed for unknown reason")
                .asRuntimeException();
        Throwable refused = Status.UNAVAILABLE
                .withDescription("io exception")
                .withCause(new ConnectException("Connection refused"))
                .asRuntimeException();
        String hint = " (it has not answered yet: if it serves TLS, the aggregator needs aggregator.tls.bundle and"
                + " https:// base URLs)";

        assertThat(GrpcFailures.translate(closed, "127.0.0.1:6565", DEADLINE, "aggregator.deadline", true)
                        .getMessage())
                .isEqualTo("the gRPC square service at 127.0.0.1:6565 is unavailable: Network closed for unknown reason"
                        + hint);
        // Once it has answered, or when nothing listens there, a closed channel is a replica going away.
        assertThat(GrpcFailures.translate(closed, "127.0.0.1:6565", DEADLINE, "aggregator.deadline", false)
                        .getMessage())
                .doesNotContain("TLS");
        assertThat(GrpcFailures.translate(refused, "127.0.0.1:6565", DEADLINE, "aggregator.deadline", true)
                        .getMessage())
                .isEqualTo("the gRPC square service at 127.0.0.1:6565 is unavailable: io exception");
    }
}
