package io.github.squarelab.aggregator.grpc;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.squarelab.aggregator.fanout.CallRecorder;
import java.util.concurrent.atomic.AtomicInteger;

/** Counts what a stream client reports: every message started must end answered or unanswered, once. */
final class CountingRecorder implements CallRecorder {

    final AtomicInteger started = new AtomicInteger();
    final AtomicInteger answered = new AtomicInteger();
    final AtomicInteger unanswered = new AtomicInteger();

    @Override
    public void started() {
        started.incrementAndGet();
    }

    @Override
    public void finished(long nanos, boolean success) {
        assertThat(nanos).isNotNegative();
        (success ? answered : unanswered).incrementAndGet();
    }
}
