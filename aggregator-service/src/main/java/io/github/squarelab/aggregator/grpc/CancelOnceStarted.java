package io.github.squarelab.aggregator.grpc;

import io.grpc.ClientCall;

/**
 * Cancels a call only once its {@code start()} has returned, never while it runs.
 *
 * <p>Why: a fan-out cancels its remaining calls from whatever thread fails it, and that cancel can land while
 * another thread is still inside {@code ClientCall.start()}. With retries on (as they are here), grpc-java then
 * throws a NullPointerException out of {@code cancel()} (grpc/grpc-java#12964) and can leak the half-started
 * stream (#13034); thrown from Reactor's cancel hook, that exception stopped the cancel reaching the rest of
 * the fan-out and left the aggregator's request hanging. So a cancel that comes too early is only remembered,
 * and the thread that started the call delivers it when {@code start()} is done.
 *
 * <p>Both fields are volatile and each side writes its own before it reads the other's, so at least one side
 * sees both and the call is cancelled; cancelling twice is harmless.
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
