package io.github.squarelab.aggregator.admission;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.concurrent.atomic.AtomicLong;

/**
 * How many fan-out requests are in progress at once, from admission until their answer is written, whatever their n:
 * each holds Tomcat's request and response with their buffers, its servlet's async state and its fan-out's, and an
 * answer that is ready still holds them while it waits for a Tomcat thread to write it.
 */
public final class RequestLimit {

    /** The heap one request in progress takes whatever its n: Tomcat's request, response and buffers, and its state. */
    static final long BYTES_PER_REQUEST = 96 * 1024;
    /** Never fewer, however small the heap: a heap that small gets its squares bounded by the square budget. */
    static final long FEWEST_REQUESTS = 16;

    private final long maxRequests;
    private final AtomicLong requests = new AtomicLong();
    private volatile Runnable whenReleased = () -> {};

    public RequestLimit(long maxRequests, MeterRegistry registry) {
        if (maxRequests < 1) {
            throw new IllegalArgumentException("the request limit must be at least 1, got " + maxRequests);
        }
        this.maxRequests = maxRequests;
        Gauge.builder("aggregator.admission.requests", requests, AtomicLong::get)
                .description("Fan-out requests admitted whose answer is not written yet")
                .register(registry);
        Gauge.builder("aggregator.admission.max.requests", () -> this.maxRequests)
                .description("The most fan-out requests in progress at once (aggregator.admission.max-requests)")
                .register(registry);
    }

    /**
     * A twelfth of the heap at {@link #BYTES_PER_REQUEST} a request, and at least {@link #FEWEST_REQUESTS}: more
     * answered no more under thousands of clients and kept more alive (docs/performance.md, "Fewer places").
     */
    public static long defaultFor(long maxHeapBytes) {
        return Math.max(FEWEST_REQUESTS, maxHeapBytes / 12 / BYTES_PER_REQUEST);
    }

    /** Takes a place if one is free; false to shed. */
    public boolean tryAcquire() {
        if (requests.incrementAndGet() > maxRequests) {
            requests.decrementAndGet();
            return false;
        }
        return true;
    }

    /** Gives back a place {@link #tryAcquire} took. */
    public void release() {
        requests.decrementAndGet();
        whenReleased.run();
    }

    /** Whether {@link #tryAcquire} would find a place now. */
    public boolean hasRoom() {
        return requests.get() < maxRequests;
    }

    /** Tells {@code listener} of every place given back, on the thread that gives it back. */
    public void whenReleased(Runnable listener) {
        this.whenReleased = listener;
    }

    public long maxRequests() {
        return maxRequests;
    }
}
