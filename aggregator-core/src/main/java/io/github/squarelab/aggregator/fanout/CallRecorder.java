package io.github.squarelab.aggregator.fanout;

/**
 * Told of every downstream call (or stream message) one fan-out makes, so that metrics see each call
 * without the transport clients knowing about metrics.
 */
public interface CallRecorder {

    /** A call was issued, or a message sent. */
    void started();

    /** A call issued earlier ended after {@code nanos}; {@code success} if it brought its answer. */
    void finished(long nanos, boolean success);

    /** Records nothing: for callers that don't measure. */
    CallRecorder NONE = new CallRecorder() {
        @Override
        public void started() {}

        @Override
        public void finished(long nanos, boolean success) {}
    };
}
