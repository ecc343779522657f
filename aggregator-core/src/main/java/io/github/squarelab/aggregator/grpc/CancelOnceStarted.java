package io.github.squarelab.aggregator.grpc;

import io.grpc.ClientCall;

/**
 * Cancels a call only once its {@code start()} has returned: grpc-java throws from a cancel during start
 * (grpc/grpc-java#12964), which once left a request hanging (docs/performance.md, "A cancel during a gRPC call's
 * start"). Each side writes its volatile field before reading the other's, so at least one of them cancels.
 */
final class CancelOnceStarted {

    private final String reason;
    private volatile ClientCall<?, ?> started;
    private volatile boolean cancelled;

    CancelOnceStarted(String reason) {
        this.reason = reason;
    }

    /** Call after {@code start()} has returned; a cancel asked for meanwhile reaches the call now. */
    void started(ClientCall<?, ?> call) {
        started = call;
        if (cancelled) {
            call.cancel(reason, null);
        }
    }

    /** Cancels the started call now, or the call as soon as it has started. */
    void cancel() {
        cancelled = true;
        ClientCall<?, ?> call = started;
        if (call != null) {
            call.cancel(reason, null);
        }
    }

    boolean isCancelled() {
        return cancelled;
    }
}
