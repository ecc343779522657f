package io.github.squarelab.floor;

import io.github.squarelab.floor.measure.FloorFailure;
import io.github.squarelab.floor.measure.Load;
import io.github.squarelab.floor.measure.Measurement;
import io.github.squarelab.floor.measure.Run;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.IntToLongFunction;

/** Short client runs against servers on loopback, and square functions that count what they answered. */
public final class ShortRuns {

    public static final Duration WARMUP = Duration.ofMillis(200);
    public static final Duration DURATION = Duration.ofSeconds(1);

    private ShortRuns() {}

    /** Short streams, so that a run of about a second has each slot run many streams. */
    public static final int MESSAGES_PER_STREAM = 100;

    /** rest_h2c's connections, so that each carries several streams of a small window. */
    public static final int H2C_CONNECTIONS = 2;

    /** A run of about a second with a small window: {@code window} calls, streams or connections. */
    public static ClientSettings settings(Transport transport, int port, int window) {
        return settings(transport, port, window, MESSAGES_PER_STREAM);
    }

    /** The same, with {@code messagesPerStream} messages on each grpc_stream or grpc_pingpong stream. */
    public static ClientSettings settings(Transport transport, int port, int window, int messagesPerStream) {
        String target = "127.0.0.1:" + port;
        return switch (transport) {
            case REST_UNARY -> new ClientSettings(transport, target, 0, 0, 0, window, WARMUP, DURATION);
            case REST_H2C -> new ClientSettings(transport, target, 0, window, 0, H2C_CONNECTIONS, WARMUP, DURATION);
            case GRPC_UNARY -> new ClientSettings(transport, target, window, 0, 0, 0, WARMUP, DURATION);
            case GRPC_STREAM, GRPC_PINGPONG ->
                new ClientSettings(transport, target, 0, window, messagesPerStream, 0, WARMUP, DURATION);
        };
    }

    public static FloorClient client(ClientSettings settings) {
        return new FloorClient(settings, new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8));
    }

    /** The true square, counting every answer in {@code answered}. */
    public static IntToLongFunction countingSquares(LongAdder answered) {
        return number -> {
            answered.increment();
            return Squares.square(number);
        };
    }

    /**
     * The true square, counted in {@code answered}, for {@code answering} from the first number asked; then a
     * hang until {@code release} opens: a server that stops answering, blocking the event loop it answers
     * on. Timed rather than counted so that answers from earlier reads have been flushed to the client;
     * with one call at a time per connection (HTTP/1.1) every answer given has been flushed.
     */
    public static IntToLongFunction squaresThenHang(Duration answering, LongAdder answered, CountDownLatch release) {
        AtomicLong firstAskedNanos = new AtomicLong();
        return number -> {
            long now = System.nanoTime();
            firstAskedNanos.compareAndSet(0, now);
            if (now - firstAskedNanos.get() > answering.toNanos()) {
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            answered.increment();
            return Squares.square(number);
        };
    }

    /** A whole run with a drain timeout of half a second, to see what it gives up. */
    public static Measurement runWithShortDrain(Load load) throws FloorFailure, InterruptedException {
        try (load) {
            return Run.measure(
                    load,
                    Duration.ofSeconds(30),
                    WARMUP,
                    Duration.ofMillis(300),
                    Duration.ofMillis(500),
                    new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8));
        }
    }

    /** One more than the square: a server that is wrong by a little. */
    public static long wrongSquare(int number) {
        return Squares.square(number) + 1;
    }
}
