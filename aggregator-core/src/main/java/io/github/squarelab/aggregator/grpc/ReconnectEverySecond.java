package io.github.squarelab.aggregator.grpc;

import io.grpc.ManagedChannel;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/** A returning replica is used within about a second, not after up to two minutes of grpc-java's reconnect backoff. */
final class ReconnectEverySecond implements AutoCloseable {

    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(runnable -> {
        Thread thread = new Thread(runnable, "square-grpc-reconnect");
        thread.setDaemon(true);
        return thread;
    });

    ReconnectEverySecond(List<ManagedChannel> channels) {
        // Whatever a channel's state: it stays READY while one replica is down. A no-op for READY subchannels.
        timer.scheduleWithFixedDelay(
                () -> channels.forEach(ManagedChannel::resetConnectBackoff), 1, 1, TimeUnit.SECONDS);
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
