package io.github.squarelab.aggregator.admission;

import io.github.squarelab.aggregator.AggregatorProperties;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;

/**
 * Admits a request on a path ({@link Lane}) only if every square the path holds, its own n included, can be answered
 * at the path's measured rate well within the deadline; each path is measured apart, as paths slow each other down
 * unequally (docs/performance.md, "Admission by expected time"). A path with nothing admitted always admits, so that
 * its rate keeps being measured, and a path is judged by the admission budget alone until it has worked for
 * {@link #WARM_UP}: a fresh JVM's first seconds answer a tenth of what it will a few seconds later, and any rate assumed
 * or measured then shed most of a first burst that it answered well within the deadline.
 */
public final class DeadlineAdmission {

    /** Busy time a path's rate is measured over: many requests' worth of squares, so one slow call does not decide. */
    static final Duration WINDOW = Duration.ofSeconds(1);

    /**
     * Busy time a path works before its rate judges it: with JVM defaults, rest/unary answered 340 squares in its
     * first second and 20,000 in its sixth, grpc/unary 575 and 45,000 (docs/performance.md, "Admission by expected
     * time").
     */
    public static final Duration WARM_UP = Duration.ofSeconds(5);

    private final Duration maxWait;
    private final String maxWaitSetting;
    private final long warmUpNanos;
    private final Duration retryAfter;
    private final LongSupplier nanoClock;
    private final MeterRegistry registry;
    private final Map<String, Lane> lanes = new ConcurrentHashMap<>();

    /**
     * @param maxWait the longest a request may be expected to take and still be admitted: a share of the deadline
     * @param maxWaitSetting how a shed request's detail names the setting, e.g. "half of aggregator.deadline"
     * @param warmUp the busy time a path works before its rate judges it
     * @param nanoClock {@link System#nanoTime}, or a test's own clock
     */
    public DeadlineAdmission(
            Duration maxWait,
            String maxWaitSetting,
            Duration warmUp,
            Duration retryAfter,
            LongSupplier nanoClock,
            MeterRegistry registry) {
        if (maxWait.isNegative() || maxWait.isZero()) {
            throw new IllegalArgumentException("the longest expected wait must be positive, got " + maxWait);
        }
        this.maxWait = maxWait;
        this.maxWaitSetting = maxWaitSetting;
        this.warmUpNanos = warmUp.toNanos();
        this.retryAfter = retryAfter;
        this.nanoClock = nanoClock;
        this.registry = registry;
        Gauge.builder("aggregator.admission.deadline.max.wait", maxWait, d -> d.toNanos() / 1e9)
                .description("The longest a request may be expected to take and still be admitted")
                .baseUnit("seconds")
                .register(registry);
    }

    /** From {@code aggregator.admission.deadline-share} of {@code aggregator.deadline}. */
    public static DeadlineAdmission from(
            AggregatorProperties properties, LongSupplier nanoClock, MeterRegistry registry) {
        AggregatorProperties.Admission admission = properties.admission();
        return new DeadlineAdmission(
                admission.maxWait(properties.deadline()),
                "aggregator.admission.deadline-share " + admission.deadlineShare() + " of aggregator.deadline "
                        + properties.deadline().toMillis() + " ms",
                WARM_UP,
                admission.retryAfter(),
                nanoClock,
                registry);
    }

    /** The path of this name, with its meters tagged {@code transport=path}: made on first use, then the same. */
    public Lane lane(String path) {
        return lanes.computeIfAbsent(path, Lane::new);
    }

    /** The squares one path holds and the rate it answers them at. */
    public final class Lane {

        private final String path;
        /** Squares admitted on this path and neither answered nor given up yet. */
        private final AtomicLong unanswered = new AtomicLong();
        /** Squares answered on this path since start; read at the ends of windows. */
        private final LongAdder answered = new LongAdder();

        private final Counter shed;

        // Guarded by this: changed only when a request is admitted or ends, not per square.
        private int open;
        private long busySince;
        /** Busy time since start, up to the warm-up: the path is judged once it is reached. */
        private long warmedNanos;

        private long windowBusyNanos;
        private long windowStartAnswered;
        /** Squares per second while busy, NaN until a first window has been measured; see {@link #measure}. */
        private double rate = Double.NaN;

        private Lane(String path) {
            this.path = path;
            Gauge.builder("aggregator.admission.deadline.squares", unanswered, AtomicLong::get)
                    .description("Squares admitted on this path and not answered yet")
                    .tag("transport", path)
                    .register(registry);
            Gauge.builder("aggregator.admission.deadline.rate", this, Lane::rate)
                    .description("Squares per second this path answered while busy, recently; NaN until measured")
                    .tag("transport", path)
                    .register(registry);
            shed = Counter.builder("aggregator.admission.deadline.shed")
                    .description("Requests shed with 503 because this path could not be expected to answer them"
                            + " within aggregator.admission.deadline-share of the deadline")
                    .tag("transport", path)
                    .register(registry);
        }

        /**
         * Takes on a request of {@code n} squares, or refuses it with an {@link OverloadedException} (nothing taken)
         * when the path could not be expected to answer it within the longest wait.
         */
        public Ticket admit(int n) {
            synchronized (this) {
                long now = nanoClock.getAsLong();
                measure(now);
                // Nothing to judge by: nothing in flight, or a path still warming up.
                boolean judged = open > 0 && warmedNanos >= warmUpNanos && !Double.isNaN(rate);
                double expectedSeconds = judged ? (unanswered.get() + n) / rate : 0;
                if (expectedSeconds * 1e9 > maxWait.toNanos()) {
                    shed.increment();
                    throw new OverloadedException(refusal(n, expectedSeconds), retryAfter);
                }
                if (open++ == 0) {
                    busySince = now;
                    if (windowBusyNanos == 0) {
                        // A window counts the answers of its busy time only.
                        windowStartAnswered = answered.sum();
                    }
                }
                unanswered.addAndGet(n);
            }
            return new Ticket(n);
        }

        /** Squares per second while busy, recently; NaN until measured. */
        public synchronized double rate() {
            return rate;
        }

        private synchronized void end(long givenUp) {
            measure(nanoClock.getAsLong());
            open--;
            unanswered.addAndGet(-givenUp);
        }

        /** Adds the busy time up to now to the window, and folds the window into the rate once it is long enough. */
        private void measure(long now) {
            if (open > 0) {
                windowBusyNanos += now - busySince;
                warmedNanos = Math.min(warmUpNanos, warmedNanos + now - busySince);
                busySince = now;
            }
            if (windowBusyNanos >= WINDOW.toNanos()) {
                long answeredNow = answered.sum();
                double sample = (answeredNow - windowStartAnswered) * 1e9 / windowBusyNanos;
                // The latest second decides, slower or faster: a slower one must not let in work judged by the rate
                // before a new neighbour came, and a faster one is a JVM still warming up (a rate that rose by halves
                // shed a third of a burst after a short warm-up) or a path back from a stall (issue #23's black
                // hole). The deadline's other share covers a slower second after a fast one.
                rate = sample;
                windowBusyNanos = 0;
                windowStartAnswered = answeredNow;
            }
        }

        /** The path as a client asks for it: grpc/unary for grpc_unary. */
        private String pathName() {
            return path.replace('_', '/');
        }

        private String refusal(int n, double expectedSeconds) {
            return String.format(
                    "the aggregator is busy: %s would take about %.1f s for %d more squares at its recent %.0f"
                            + " squares/s, more than %d ms (%s); retry later",
                    pathName(), expectedSeconds, n, rate, maxWait.toMillis(), maxWaitSetting);
        }

        /** One admitted request: told of each square answered, and closed exactly once when the request ends. */
        public final class Ticket {

            /** Squares of this request not answered yet; 0 once closed, so a late answer counts nowhere. */
            private final AtomicInteger remaining;

            private final AtomicBoolean closed = new AtomicBoolean();

            private Ticket(int n) {
                this.remaining = new AtomicInteger(n);
            }

            /** One square of this request was answered. */
            public void answered() {
                int left;
                do {
                    left = remaining.get();
                    if (left == 0) {
                        return;
                    }
                } while (!remaining.compareAndSet(left, left - 1));
                unanswered.decrementAndGet();
                answered.increment();
            }

            /** The request is over; what it did not get answered is given up. */
            public void close() {
                if (closed.compareAndSet(false, true)) {
                    end(remaining.getAndSet(0));
                }
            }
        }
    }
}
