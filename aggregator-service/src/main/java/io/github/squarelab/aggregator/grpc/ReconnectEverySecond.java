package io.github.squarelab.aggregator.grpc;

import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * While the square service is down, grpc-java waits longer and longer between reconnect attempts (up to
 * two minutes) and fails calls at once in between, so the aggregator could keep answering 503 long after
 * the service is back. This caps the wait at about a second: once a second, a channel in
 * TRANSIENT_FAILURE is told to reconnect now. It costs one connection attempt a second while the service
 * is down, and a volatile read a second while it is up.
 */
final class ReconnectEverySecond implements AutoCloseable {

    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(runnable -> {
        Thread thread = new Thread(runnable, "square-grpc-reconnect");
        thread.setDaemon(true);
        return thread;
    });

    ReconnectEverySecond(ManagedChannel channel) {
        timer.scheduleWithFixedDelay(() -> {
            if (channel.getState(false) == ConnectivityState.TRANSIENT_FAILURE) {
                channel.resetConnectBackoff();
            }
        }, 1, 1, TimeUnit.SECONDS);
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
