package io.github.squarelab.stream;

import java.util.Arrays;

/**
 * When each unanswered stream message was sent, oldest first. Answers come in order, so the oldest send
 * time belongs to the next answer. A growable ring of primitives: no boxing per message, and it holds only
 * what flow control lets be in flight.
 */
public final class SendTimes {

    private long[] times = new long[64];
    private int head;
    private int size;

    public void add(long nanos) {
        if (size == times.length) {
            grow();
        }
        times[(head + size) % times.length] = nanos;
        size++;
    }

    /** The oldest send time; call only when {@link #isEmpty()} is false. */
    public long poll() {
        long oldest = times[head];
        head = (head + 1) % times.length;
        size--;
        return oldest;
    }

    public boolean isEmpty() {
        return size == 0;
    }

    public int size() {
        return size;
    }

    private void grow() {
        long[] larger = Arrays.copyOf(times, times.length * 2);
        // The part that wrapped around to the front moves behind the old end.
        System.arraycopy(times, 0, larger, times.length, head);
        times = larger;
    }
}
