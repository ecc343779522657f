package io.github.squarelab.floor.measure;

/**
 * The latencies one thread recorded, in nanoseconds, counted in buckets at most a thousandth of their
 * values wide (log-linear, as HdrHistogram keeps three significant digits): recording allocates nothing
 * and needs no lock (each thread has its own), and the memory is fixed, 430 KB a thread, however long
 * and fast the run. Every sample kept exactly (8 bytes a call) outgrew the lab's 128 MB heap: the
 * grpc-stream floor answers some 400 000 messages a second, all on one thread, and the array holding
 * ten seconds of them could not double any more.
 */
final class LatencyHistogram {

    /** Each power of two is split into 2^10 buckets, so a bucket is at most 1/1024 of its values wide. */
    private static final int SUB_BUCKET_BITS = 10;
    private static final int SUB_BUCKETS = 1 << SUB_BUCKET_BITS;
    /** Below 2 × 1024 ns every value has a bucket of its own; above, 1024 per power of two up to 2^63. */
    private static final int BUCKETS = bucketOf(Long.MAX_VALUE) + 1;

    private final long[] counts = new long[BUCKETS];
    private long count;
    private long max;

    void add(long latencyNanos) {
        long nanos = Math.max(latencyNanos, 0);
        counts[bucketOf(nanos)]++;
        count++;
        max = Math.max(max, nanos);
    }

    long count() {
        return count;
    }

    /** The largest latency recorded, exactly. */
    long max() {
        return max;
    }

    /** Adds {@code other}'s samples to these; only once the threads have stopped recording. */
    void addAll(LatencyHistogram other) {
        for (int bucket = 0; bucket < BUCKETS; bucket++) {
            counts[bucket] += other.counts[bucket];
        }
        count += other.count;
        max = Math.max(max, other.max);
    }

    /**
     * Nearest-rank: the smallest recorded latency that at least {@code percent} % of the samples do not
     * exceed, given as the largest value of its bucket (so at most 1/1024 above it, and exact below
     * 2048 ns), but never above the largest sample. Zero when nothing was recorded.
     */
    long percentile(double percent) {
        if (count == 0) {
            return 0;
        }
        long rank = Math.max(1, (long) Math.ceil(percent / 100 * count));
        long seen = 0;
        int bucket = 0;
        while (seen + counts[bucket] < rank) {
            seen += counts[bucket];
            bucket++;
        }
        return Math.min(highestIn(bucket), max);
    }

    /** Values below 2048 are their own bucket; above, the top 11 bits pick one of 1024 per power of two. */
    static int bucketOf(long nanos) {
        if (nanos < 2 * SUB_BUCKETS) {
            return (int) nanos;
        }
        int shift = 63 - Long.numberOfLeadingZeros(nanos) - SUB_BUCKET_BITS;
        return shift * SUB_BUCKETS + (int) (nanos >>> shift);
    }

    /** The largest value {@link #bucketOf} puts in {@code bucket}. */
    static long highestIn(int bucket) {
        if (bucket < 2 * SUB_BUCKETS) {
            return bucket;
        }
        int shift = bucket / SUB_BUCKETS - 1;
        long top = bucket - (long) shift * SUB_BUCKETS;
        // For the very last bucket this wraps round to Long.MAX_VALUE, which is what it should be.
        return ((top + 1) << shift) - 1;
    }
}
