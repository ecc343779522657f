package io.github.squarelab.aggregator.admission;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.concurrent.atomic.AtomicLong;

/**
 * How many squares the admitted requests hold at once, across all requests and paths. A request is admitted
 * only if its n still fits; otherwise it is shed at once with a 503 and Retry-After (see the README's
 * "Overload and failures"). The unit is the square, not the request, because one request may ask for 0 or
 * 100000 and its memory grows with n. A request larger than the whole budget still runs, alone.
 */
public final class AdmissionBudget {

    /** The heap one square held by a request may take: its long, its JSON text twice, the encoded answer, garbage. */
    static final long BYTES_PER_SQUARE = 256;
    /** What a 128 MiB heap gives; a larger heap queues up no more work than a small machine finishes in a deadline. */
    static final long MOST_SQUARES_BY_DEFAULT = 131_072;

    private final long maxSquares;
    private final AtomicLong squares = new AtomicLong();

    public AdmissionBudget(long maxSquares, MeterRegistry registry) {
        if (maxSquares < 1) {
            throw new IllegalArgumentException("the admission budget must be at least 1 square, got " + maxSquares);
        }
        this.maxSquares = maxSquares;
        Gauge.builder("aggregator.admission.squares", squares, AtomicLong::get)
                .description("Squares held by the requests admitted and not finished yet")
                .register(registry);
        Gauge.builder("aggregator.admission.max.squares", () -> this.maxSquares)
                .description(
                        "The most squares the admitted requests may hold at once (aggregator.admission.max-squares)")
                .register(registry);
    }

    /** A quarter of the heap at {@link #BYTES_PER_SQUARE} a square, and no more than {@link #MOST_SQUARES_BY_DEFAULT}. */
    public static long defaultFor(long maxHeapBytes) {
        return Math.max(1, Math.min(MOST_SQUARES_BY_DEFAULT, maxHeapBytes / 4 / BYTES_PER_SQUARE));
    }

    /** Takes {@code n} squares from the budget if they fit, or if nothing else is admitted; false to shed. */
    public boolean tryAdmit(int n) {
        long held;
        do {
            held = squares.get();
            if (held > 0 && held + n > maxSquares) {
                return false;
            }
        } while (!squares.compareAndSet(held, held + n));
        return true;
    }

    /** Gives back what {@link #tryAdmit} took, once the request is over. */
    public void release(int n) {
        squares.addAndGet(-n);
    }

    public long maxSquares() {
        return maxSquares;
    }
}
