package io.github.squarelab.aggregator.rest;

import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;
import reactor.util.context.Context;

/**
 * At most {@code max} calls under way at once; the others wait in order, before their call has begun, so that a
 * waiting call holds no payload (the clients behind WebClient build the request, body and all, before they queue
 * it for a connection). Cancelling a waiting call takes it out of the line; cancelling a running one cancels it.
 */
final class CallLimit {

    private static final int WAITING = 0;
    private static final int STARTED = 1;
    private static final int CANCELLED = 2;

    private final int max;
    private final AtomicInteger running = new AtomicInteger();
    private final Queue<Waiter<?>> waiting = new ConcurrentLinkedQueue<>();
    /** Serializes {@link #drain()}: a call that ends at once starts the next from the same loop, not recursively. */
    private final AtomicInteger draining = new AtomicInteger();

    CallLimit(int max) {
        this.max = max;
    }

    /** {@code call}, subscribed once fewer than {@code max} calls run. */
    <T> Mono<T> run(Mono<T> call) {
        return Mono.create(sink -> {
            Waiter<T> waiter = new Waiter<>(call, sink);
            sink.onCancel(waiter::cancel);
            waiting.offer(waiter);
            drain();
        });
    }

    /** Calls running now, for tests. */
    int running() {
        return running.get();
    }

    private void release() {
        running.decrementAndGet();
        drain();
    }

    private void drain() {
        if (draining.getAndIncrement() != 0) {
            return;
        }
        int missed = 1;
        do {
            while (!waiting.isEmpty()) {
                int now = running.get();
                if (now >= max) {
                    break;
                }
                if (!running.compareAndSet(now, now + 1)) {
                    continue;
                }
                Waiter<?> next = waiting.poll();
                if (next == null || !next.start()) {
                    running.decrementAndGet();
                }
            }
            missed = draining.addAndGet(-missed);
        } while (missed != 0);
    }

    private final class Waiter<T> {

        private final Mono<T> call;
        private final MonoSink<T> sink;
        private final AtomicInteger state = new AtomicInteger(WAITING);
        private final Disposable.Swap subscription = Disposables.swap();

        Waiter(Mono<T> call, MonoSink<T> sink) {
            this.call = call;
            this.sink = sink;
        }

        /** Starts the call with the permit just taken; false if it was cancelled while it waited. */
        boolean start() {
            if (!state.compareAndSet(WAITING, STARTED)) {
                return false;
            }
            // A cancel that comes before update disposes the swap, and update then cancels the call at once.
            subscription.update(call.doFinally(signal -> release())
                    .subscribe(sink::success, sink::error, sink::success, Context.of(sink.contextView())));
            return true;
        }

        void cancel() {
            if (!state.compareAndSet(WAITING, CANCELLED)) {
                subscription.dispose();
            } else {
                waiting.remove(this);
            }
        }
    }
}
