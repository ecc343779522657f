package io.github.squarelab.aggregator.fanout;

import io.github.squarelab.payload.Shape;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntFunction;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Square clients whose answers a test scripts, standing in for the transports in slice tests (the real
 * transports have their own tests against real servers). They count calls and the most in flight at once, and
 * keep the payload shapes they were asked to carry.
 */
final class ScriptedClients {

    private ScriptedClients() {}

    static Mono<Long> correct(int number) {
        return Mono.just((long) number * number);
    }

    static final class Unary implements UnarySquareClient {

        private final Transport transport;
        final AtomicInteger calls = new AtomicInteger();
        final AtomicInteger inFlight = new AtomicInteger();
        final AtomicInteger mostInFlight = new AtomicInteger();
        final Set<Shape> shapes = ConcurrentHashMap.newKeySet();
        volatile IntFunction<Mono<Long>> answer = ScriptedClients::correct;

        Unary(Transport transport) {
            this.transport = transport;
        }

        @Override
        public Transport transport() {
            return transport;
        }

        @Override
        public Mono<Long> square(int number, Shape shape) {
            return Mono.defer(() -> {
                calls.incrementAndGet();
                shapes.add(shape);
                mostInFlight.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
                AtomicBoolean answered = new AtomicBoolean();
                Runnable done = () -> {
                    if (answered.compareAndSet(false, true)) {
                        inFlight.decrementAndGet();
                    }
                };
                return answer.apply(number).doOnTerminate(done).doOnCancel(done);
            });
        }

        void reset() {
            calls.set(0);
            inFlight.set(0);
            mostInFlight.set(0);
            shapes.clear();
            answer = ScriptedClients::correct;
        }
    }

    static final class Stream implements StreamSquareClient {

        private final Transport transport;
        final AtomicInteger streams = new AtomicInteger();
        final Set<Shape> shapes = ConcurrentHashMap.newKeySet();
        volatile Mono<Squares> failure;

        Stream(Transport transport) {
            this.transport = transport;
        }

        @Override
        public Transport transport() {
            return transport;
        }

        @Override
        public Mono<Squares> squares(int n, Shape shape, CallRecorder recorder) {
            streams.incrementAndGet();
            shapes.add(shape);
            if (failure != null) {
                return failure;
            }
            return Flux.range(1, n)
                    .doOnNext(number -> recorder.started())
                    .concatMap(ScriptedClients::correct)
                    .doOnNext(square -> recorder.finished(1_000, true))
                    .collect(() -> new Squares(n), Squares::add);
        }

        void reset() {
            streams.set(0);
            shapes.clear();
            failure = null;
        }
    }
}
