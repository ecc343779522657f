package io.github.squarelab.floor.measure;

import com.sun.management.OperatingSystemMXBean;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

/**
 * One run's measured interval, and what its load reports all run long: every checked answer, the latencies
 * of those inside the interval, this process's CPU time across it, and the first failure.
 */
public final class MeasuredInterval {

    private static final OperatingSystemMXBean OS = ManagementFactory.getPlatformMXBean(OperatingSystemMXBean.class);

    /** Answers arrive on every event loop at once; a Recorder takes them without a lock. */
    private final Recorder latencies = new Recorder(3);

    private final LongAdder checked = new LongAdder();
    private final LongAdder unanswered = new LongAdder();
    private final AtomicReference<String> failure = new AtomicReference<>();
    private final CountDownLatch failed = new CountDownLatch(1);
    private final CountDownLatch answeredOrFailed = new CountDownLatch(1);
    private Histogram measuredLatencies;
    private long openedNanos;
    private long closedNanos;
    private long cpuNanosAtOpen;
    private long cpuNanosAtClose;

    /** A correct answer to a call that took {@code latencyNanos}, from sending to the checked answer. */
    public void answered(long latencyNanos) {
        checked.increment();
        if (answeredOrFailed.getCount() > 0) {
            answeredOrFailed.countDown();
        }
        latencies.recordValue(latencyNanos);
    }

    /** Calls (stream messages) sent but given up unanswered when the load stopped; not a failure. */
    public void unanswered(long calls) {
        unanswered.add(calls);
    }

    /** The run has failed; the first failure is the one reported. */
    public void fail(String what) {
        if (failure.compareAndSet(null, what)) {
            failed.countDown();
            answeredOrFailed.countDown();
        }
    }

    public boolean hasFailed() {
        return failure.get() != null;
    }

    /** Waits {@code time}, or less if the run fails meanwhile. */
    void await(Duration time) throws FloorFailure, InterruptedException {
        failed.await(time.toNanos(), TimeUnit.NANOSECONDS);
        throwIfFailed();
    }

    /** Waits until the first answer has come, or the run has failed, or {@code timeout} has passed. */
    void awaitFirstAnswer(Duration timeout) throws FloorFailure, InterruptedException {
        boolean answeredOrFailedInTime = answeredOrFailed.await(timeout.toNanos(), TimeUnit.NANOSECONDS);
        throwIfFailed();
        if (!answeredOrFailedInTime) {
            throw new FloorFailure("no answer within " + timeout.toMillis() + " ms of starting");
        }
    }

    void throwIfFailed() throws FloorFailure {
        String what = failure.get();
        if (what != null) {
            throw new FloorFailure(what);
        }
    }

    void open() {
        cpuNanosAtOpen = OS.getProcessCpuTime();
        openedNanos = System.nanoTime();
        latencies.reset();
    }

    void close() {
        measuredLatencies = latencies.getIntervalHistogram();
        closedNanos = System.nanoTime();
        cpuNanosAtClose = OS.getProcessCpuTime();
    }

    Duration measured() {
        return Duration.ofNanos(closedNanos - openedNanos);
    }

    /** CPU time this whole process used while the interval was open, all threads. */
    Duration cpuWhileOpen() {
        return Duration.ofNanos(cpuNanosAtClose - cpuNanosAtOpen);
    }

    /** Every answer checked, measured or not. */
    long answersChecked() {
        return checked.sum();
    }

    long unansweredAtEnd() {
        return unanswered.sum();
    }

    /** The latencies recorded while the interval was open. */
    Histogram latencies() {
        return measuredLatencies;
    }
}
