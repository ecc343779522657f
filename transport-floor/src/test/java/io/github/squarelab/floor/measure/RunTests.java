package io.github.squarelab.floor.measure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The phases of a run, with a load that answers on a timer of its own. */
class RunTests {

    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
    private final ByteArrayOutputStream progress = new ByteArrayOutputStream();

    @AfterEach
    void stopTimer() {
        timer.shutdownNow();
    }

    @Test
    void countsOnlyTheAnswersInsideTheIntervalAndMarksItForTheDriverScript() throws Exception {
        Load load = new TickingLoad(timer, Duration.ofMillis(1), null);

        Measurement measurement = Run.measure(
                load,
                Duration.ofSeconds(5),
                Duration.ofMillis(300),
                Duration.ofMillis(500),
                Duration.ofSeconds(1),
                new PrintStream(progress, true, StandardCharsets.UTF_8));

        assertThat(measurement.calls()).isPositive().isLessThan(measurement.answersChecked());
        assertThat(measurement.measured()).isBetween(Duration.ofMillis(500), Duration.ofMillis(1500));
        assertThat(measurement.latency()).isEqualTo(new Latency(1.5, 1.5, 1.5, 1.5));
        assertThat(progress.toString(StandardCharsets.UTF_8).lines())
                .containsExactly(
                        "floor: warming up for 300 ms",
                        "floor: measuring for 500 ms",
                        "floor: measured; checking the answers still in flight");
    }

    @Test
    void aFailureEndsTheRunAtOnceWithItsMessage() {
        Load load = new TickingLoad(timer, Duration.ofMillis(1), "answered 5 for 2");

        assertThatThrownBy(() -> Run.measure(
                        load,
                        Duration.ofSeconds(5),
                        Duration.ofSeconds(30),
                        Duration.ofSeconds(30),
                        Duration.ofSeconds(1),
                        new PrintStream(progress, true, StandardCharsets.UTF_8)))
                .isInstanceOf(FloorFailure.class)
                .hasMessage("answered 5 for 2");
    }

    @Test
    void aLoadThatNeverAnswersFailsAfterTheFirstAnswerTimeout() {
        assertThatThrownBy(() -> Run.measure(
                        new SilentLoad(),
                        Duration.ofMillis(200),
                        Duration.ofSeconds(30),
                        Duration.ofSeconds(30),
                        Duration.ofSeconds(1),
                        new PrintStream(progress, true, StandardCharsets.UTF_8)))
                .isInstanceOf(FloorFailure.class)
                .hasMessage("no answer within 200 ms of starting");
    }

    /** Starts no call, so never answers. */
    private static final class SilentLoad implements Load {

        @Override
        public void start(MeasuredInterval interval) {}

        @Override
        public void stop(Duration timeout) {}

        @Override
        public void close() {}
    }

    /** Answers one call per tick, each taking 1.5 µs (exact in the histogram), or fails on the first tick. */
    private record TickingLoad(ScheduledExecutorService timer, Duration tick, String failure) implements Load {

        @Override
        public void start(MeasuredInterval interval) {
            timer.scheduleAtFixedRate(
                    () -> {
                        if (failure != null) {
                            interval.fail(failure);
                        } else {
                            interval.answered(1_500);
                        }
                    },
                    0,
                    tick.toNanos(),
                    TimeUnit.NANOSECONDS);
        }

        @Override
        public void stop(Duration timeout) throws InterruptedException {
            timer.shutdown();
            timer.awaitTermination(timeout.toNanos(), TimeUnit.NANOSECONDS);
        }

        @Override
        public void close() {
            timer.shutdownNow();
        }
    }
}
