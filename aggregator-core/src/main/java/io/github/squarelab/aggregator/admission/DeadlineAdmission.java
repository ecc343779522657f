package io.github.squarelab.aggregator.admission;

import io.github.squarelab.aggregator.AggregatorProperties;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
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
 * its rate keeps being measured, and a path is judged by the admission budget alone until it has worked through its
 * {@link WarmUp}: a fresh JVM's first seconds answer a tenth of what it will a few seconds later, and any rate assumed
 * or measured then shed most of a first burst that it answered well within the deadline. The faster of the path's
 * latest two seconds judges it, and a second measured with fewer requests open than there would be is scaled up by
 * their ratio (each request keeps its own calls in flight), at most by what the rest of the deadline covers: a path
 * that does not speed up with more work still answers in time.
 */
public final class DeadlineAdmission {

    /** Busy time a path's rate is measured over: many requests' worth of squares, so one slow call does not decide. */
    static final Duration WINDOW = Duration.ofSeconds(1);

    /**
     * What a path works through before its rate judges it: so long busy, so many squares answered, and a second in
     * which the JIT compiler took at most a share of the time, or else at most the longest busy time; a path once
     * warm stays so.
     *
     * @param busy busy time: with JVM defaults, rest/unary answered 340 squares in its first second and 20,000 in its
     *     sixth, grpc/unary 575 and 45,000
     * @param squares squares answered: on a slower machine 5 s may hold a single cold request, whose rate then shed a
     *     first burst of 100 that the JIT, given the work, answers within the deadline
     * @param jitShare the share of a second's wall time the JIT may spend compiling: while it compiles more, it takes
     *     the CPU from the path and makes its code faster, so the path answers the next seconds several times faster
     *     than the last (docs/performance.md, "Admission by expected time")
     * @param longest busy time after which a path is judged whatever its squares and the JIT: one that never settles
     *     is still shed from
     */
    public record WarmUp(Duration busy, long squares, double jitShare, Duration longest) {

        /**
         * The aggregator's own: past it, HotSpot has compiled what a square's call runs through (about 10,000 calls).
         * With 2 cores its JIT first compiled 10 % of a second or less 30 s into the design's load; with one core's
         * quota and jvm.options it still compiled 90 % of each second after 60 s, and judged then, rest/h2c shed 835 of
         * 1000 requests that all answered within the deadline unjudged.
         */
        public static final WarmUp DEFAULT = new WarmUp(Duration.ofSeconds(5), 20_000, 0.1, Duration.ofSeconds(120));

        /** Judged from the first measured second on. */
        public static final WarmUp NONE = new WarmUp(Duration.ZERO, 0, Double.POSITIVE_INFINITY, Duration.ZERO);
    }

    /**
     * The clocks admission reads, in nanoseconds.
     *
     * @param wall {@link System#nanoTime}, or a test's own clock
     * @param jit the time the JVM's JIT compilers have worked since it started, or a test's own
     */
    public record Clocks(LongSupplier wall, LongSupplier jit) {

        /** This JVM's; a JVM that does not say how long it compiled counts as never compiling. */
        public static Clocks system() {
            CompilationMXBean compiler = ManagementFactory.getCompilationMXBean();
            LongSupplier jit = compiler != null && compiler.isCompilationTimeMonitoringSupported()
                    ? () -> compiler.getTotalCompilationTime() * 1_000_000L
                    : () -> 0;
            return new Clocks(System::nanoTime, jit);
        }
    }

    private final Duration maxWait;
    /** The most a rate is scaled up for more requests than it was measured with: deadline / maxWait. */
    private final double maxGrowth;

    private final String maxWaitSetting;
    private final long warmUpNanos;
    private final long longestWarmUpNanos;
    private final WarmUp warmUp;
    private final Duration retryAfter;
    private final LongSupplier nanoClock;
    private final LongSupplier jitClock;
    private final MeterRegistry registry;
    private final Map<String, Lane> lanes = new ConcurrentHashMap<>();

    /**
     * @param maxWait the longest a request may be expected to take and still be admitted: a share of the deadline
     * @param deadline the whole deadline a request gets, at least maxWait
     * @param maxWaitSetting how a shed request's detail names the setting, e.g. "half of aggregator.deadline"
     * @param warmUp what a path works through before its rate judges it
     */
    public DeadlineAdmission(
            Duration maxWait,
            Duration deadline,
            String maxWaitSetting,
            WarmUp warmUp,
            Duration retryAfter,
            Clocks clocks,
            MeterRegistry registry) {
        if (maxWait.isNegative() || maxWait.isZero()) {
            throw new IllegalArgumentException("the longest expected wait must be positive, got " + maxWait);
        }
        if (deadline.compareTo(maxWait) < 0) {
            throw new IllegalArgumentException(
                    "the deadline " + deadline + " must be at least the longest expected wait " + maxWait);
        }
        this.maxWait = maxWait;
        this.maxGrowth = (double) deadline.toNanos() / maxWait.toNanos();
        this.maxWaitSetting = maxWaitSetting;
        this.warmUpNanos = warmUp.busy().toNanos();
        this.longestWarmUpNanos = Math.max(warmUpNanos, warmUp.longest().toNanos());
        this.warmUp = warmUp;
        this.retryAfter = retryAfter;
        this.nanoClock = clocks.wall();
        this.jitClock = clocks.jit();
        this.registry = registry;
        Gauge.builder("aggregator.admission.deadline.max.wait", maxWait, d -> d.toNanos() / 1e9)
                .description("The longest a request may be expected to take and still be admitted")
                .baseUnit("seconds")
                .register(registry);
    }

    /** From {@code aggregator.admission.deadline-share} of {@code aggregator.deadline}. */
    public static DeadlineAdmission from(AggregatorProperties properties, Clocks clocks, MeterRegistry registry) {
        AggregatorProperties.Admission admission = properties.admission();
        return new DeadlineAdmission(
                admission.maxWait(properties.deadline()),
                properties.deadline(),
                "aggregator.admission.deadline-share " + admission.deadlineShare() + " of aggregator.deadline "
                        + properties.deadline().toMillis() + " ms",
                WarmUp.DEFAULT,
                admission.retryAfter(),
                clocks,
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
        /** Busy time since start, up to the longest warm-up's. */
        private long warmedNanos;
        /** Past its warm-up: judged by its rate from now on. */
        private boolean warm;

        private long windowBusyNanos;
        /** Requests open times busy time, over the window: their mean while the window was measured. */
        private long windowOpenNanos;

        private long windowStartAnswered;
        private long windowStartWall;
        private long windowStartJit;
        /** The latest window measured and the one before it, null until measured; see {@link #measure}. */
        private Window latest;

        private Window before;

        private Lane(String path) {
            this.path = path;
            this.windowStartWall = nanoClock.getAsLong();
            this.windowStartJit = jitClock.getAsLong();
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
                boolean judged = open > 0 && warm;
                double expectedRate = judged ? expectedRate(open + 1) : Double.NaN;
                double expectedSeconds = judged ? (unanswered.get() + n) / expectedRate : 0;
                if (expectedSeconds * 1e9 > maxWait.toNanos()) {
                    shed.increment();
                    throw new OverloadedException(refusal(n, expectedSeconds, expectedRate), retryAfter);
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

        /** Squares per second the path may be expected to answer with this many requests open. */
        private double expectedRate(int requests) {
            double expected = latest.expectedRate(requests, maxGrowth);
            return before == null ? expected : Math.max(expected, before.expectedRate(requests, maxGrowth));
        }

        /** Squares per second while busy in the latest window; NaN until measured. */
        public synchronized double rate() {
            return latest == null ? Double.NaN : latest.rate();
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
                windowOpenNanos += open * (now - busySince);
                warmedNanos = Math.min(longestWarmUpNanos, warmedNanos + now - busySince);
                busySince = now;
            }
            if (windowBusyNanos >= WINDOW.toNanos()) {
                long answeredNow = answered.sum();
                double sample = (answeredNow - windowStartAnswered) * 1e9 / windowBusyNanos;
                // The latest two seconds decide, slower or faster. One slow second (a full collection, or a burst's
                // start, which reads 100 requests and writes 100 answers) shed 106 requests of a closed loop that all
                // answered within the deadline; two are a new neighbour or a stall (issue #23's black hole), and the
                // deadline's other share covers the second let in at the rate before. A faster second is a JVM still
                // warming up (a rate that rose by halves shed a third of a burst) or a path back from a stall.
                before = latest;
                latest = new Window(sample, (double) windowOpenNanos / windowBusyNanos);
                long jitNow = jitClock.getAsLong();
                double jitShare = (double) (jitNow - windowStartJit) / Math.max(1, now - windowStartWall);
                warm = warm
                        || warmedNanos >= longestWarmUpNanos
                        || (warmedNanos >= warmUpNanos
                                && answeredNow >= warmUp.squares()
                                && jitShare <= warmUp.jitShare());
                windowBusyNanos = 0;
                windowOpenNanos = 0;
                windowStartAnswered = answeredNow;
                windowStartWall = now;
                windowStartJit = jitNow;
            }
        }

        /**
         * A window's squares per second and the requests open on average while it was measured.
         *
         * @param open how many requests the rate was measured with: a rate measured at the tail of a burst, with one
         *     request left, judged the next burst of 100 by it and shed 84 of them at once, whose sheds then took the
         *     CPU that would have answered the rest (docs/performance.md, "Admission by expected time")
         */
        private record Window(double rate, double open) {

            /** The rate scaled up for more requests open than it was measured with, at most by maxGrowth. */
            double expectedRate(int requests, double maxGrowth) {
                return rate * Math.min(maxGrowth, Math.max(1, requests / open));
            }
        }

        /** The path as a client asks for it: grpc/unary for grpc_unary. */
        private String pathName() {
            return path.replace('_', '/');
        }

        private String refusal(int n, double expectedSeconds, double expectedRate) {
            return String.format(
                    "the aggregator is busy: %s would take about %.1f s for %d more squares at its recent %.0f"
                            + " squares/s, more than %d ms (%s); retry later",
                    pathName(), expectedSeconds, n, expectedRate, maxWait.toMillis(), maxWaitSetting);
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
