package io.github.squarelab.aggregator.rest;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The REST square service's replicas, each with its own client and connections, taken in turn; one that just
 * refused or dropped a call is passed over for a moment so that calls do not keep paying for its failure.
 */
final class RestReplicas {

    /** Long enough to spare most calls a refused connection, short enough that a returning replica is soon used. */
    static final Duration SKIP_AFTER_FAILURE = Duration.ofSeconds(1);

    /** One replica: its base URL (for error messages), and the client that calls it. */
    static final class Replica {

        private final String baseUrl;
        private final RestExchange exchange;
        /** System.nanoTime() until which this replica is passed over. */
        private volatile long skipUntil = System.nanoTime();
        /** Whether any answer, of any status, has come from it: a plaintext call to a TLS port never gets one. */
        private volatile boolean answered;

        Replica(String baseUrl, RestExchange exchange) {
            this.baseUrl = baseUrl;
            this.exchange = exchange;
        }

        String baseUrl() {
            return baseUrl;
        }

        RestExchange exchange() {
            return exchange;
        }

        void answered() {
            answered = true;
        }

        boolean hasAnswered() {
            return answered;
        }

        private boolean skipped(long now) {
            return now - skipUntil < 0;
        }
    }

    private final List<Replica> replicas;
    private final AtomicInteger turn = new AtomicInteger();

    RestReplicas(List<Replica> replicas) {
        if (replicas.isEmpty()) {
            throw new IllegalArgumentException("no REST square service replicas given");
        }
        this.replicas = List.copyOf(replicas);
    }

    /** The next replica in turn that is not passed over; if all are, the next in turn anyway. */
    Replica next() {
        return nextOtherThan(null);
    }

    /** Like {@link #next()}, but not {@code tried}, unless it is the only replica. */
    Replica nextOtherThan(Replica tried) {
        int size = replicas.size();
        if (size == 1) {
            return replicas.get(0);
        }
        long now = System.nanoTime();
        int start = Math.floorMod(turn.getAndIncrement(), size);
        Replica fallback = null;
        for (int i = 0; i < size; i++) {
            Replica replica = replicas.get((start + i) % size);
            if (replica == tried) {
                continue;
            }
            if (!replica.skipped(now)) {
                return replica;
            }
            if (fallback == null) {
                fallback = replica;
            }
        }
        return fallback;
    }

    /** The replica refused, reset or dropped a call, or said it is unavailable. */
    void failed(Replica replica) {
        replica.skipUntil = System.nanoTime() + SKIP_AFTER_FAILURE.toNanos();
    }

    List<Replica> all() {
        return replicas;
    }

    /** Closes every replica's client. */
    void dispose() {
        replicas.forEach(replica -> replica.exchange.close());
    }
}
