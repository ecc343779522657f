package io.github.squarelab.floor.measure;

import java.util.Arrays;
import java.util.Collection;

/**
 * Every latency one thread recorded, in nanoseconds: a growable array of primitives, so that recording
 * allocates nothing per call and needs no lock (each thread has its own). Eight bytes a call, so ten
 * seconds at a million calls a second is 80 MB; the percentiles are exact.
 */
final class LatencySamples {

    private long[] nanos = new long[4096];
    private int size;

    void add(long latencyNanos) {
        if (size == nanos.length) {
            nanos = Arrays.copyOf(nanos, nanos.length * 2);
        }
        nanos[size++] = latencyNanos;
    }

    int size() {
        return size;
    }

    /** All the samples of all the threads, sorted; read only once the threads have stopped recording. */
    static long[] sortedUnion(Collection<LatencySamples> perThread) {
        long[] all = new long[perThread.stream().mapToInt(LatencySamples::size).sum()];
        int at = 0;
        for (LatencySamples samples : perThread) {
            System.arraycopy(samples.nanos, 0, all, at, samples.size);
            at += samples.size;
        }
        Arrays.sort(all);
        return all;
    }
}
