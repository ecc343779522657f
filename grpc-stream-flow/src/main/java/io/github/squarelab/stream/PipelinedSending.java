package io.github.squarelab.stream;

import io.grpc.CallOptions;

/**
 * How a client opens a bidi stream it sends on while grpc-java says it is ready: the aggregator's streams and the
 * floor's, so that both hold the same in memory.
 */
public final class PipelinedSending {

    /**
     * Bytes a stream may have waiting to go out before {@code isReady()} turns false. grpc-java's default, 32 KiB, is
     * some 2,000 small messages, each held as about 300 bytes of objects while it waits for HTTP/2 flow control
     * (docs/performance.md, "The stream's send queue").
     */
    public static final int ON_READY_THRESHOLD_BYTES = 1024;

    private PipelinedSending() {}

    /** {@code options} with the stream's ready threshold. */
    public static CallOptions callOptions(CallOptions options) {
        return options.withOnReadyThreshold(ON_READY_THRESHOLD_BYTES);
    }
}
