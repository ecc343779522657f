package io.github.squarelab.floor;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.IntToLongFunction;

/** Short client runs against servers on loopback, and square functions that count what they answered. */
public final class ShortRuns {

    public static final Duration WARMUP = Duration.ofMillis(200);
    public static final Duration DURATION = Duration.ofSeconds(1);

    private ShortRuns() {
    }

    /** A run of about a second with a small window: {@code window} calls, streams or connections. */
    public static ClientSettings settings(Transport transport, int port, int window) {
        return new ClientSettings(transport, "127.0.0.1:" + port, window, window, window, WARMUP, DURATION);
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

    /** One more than the square: a server that is wrong by a little. */
    public static long wrongSquare(int number) {
        return Squares.square(number) + 1;
    }
}
