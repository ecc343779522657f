package io.github.squarelab.aggregator.admission;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The deadline admission on a clock of the test's own: every figure below is exact. */
class DeadlineAdmissionTests {

    private static final long SECOND = 1_000_000_000L;

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final AtomicLong clock = new AtomicLong(123 * SECOND);
    /** The time the JIT has compiled: still, unless a test moves it. */
    private final AtomicLong jit = new AtomicLong(7 * SECOND);
    /**
     * Judged from its first measured second on, so that each test sets the rate it needs in one window; its deadline is
     * its longest wait, so a rate is never scaled up for more requests.
     */
    private final DeadlineAdmission admission = admission(Duration.ofSeconds(10), DeadlineAdmission.WarmUp.NONE);

    private final DeadlineAdmission.Lane unary = admission.lane("grpc_unary");

    @Test
    void aPathNotMeasuredYetAdmitsAFirstBurstOfAnySize() {
        for (int request = 0; request < 100; request++) {
            unary.admit(1000);
        }

        assertThat(unary.rate()).isNaN();
        assertThat(squares("grpc_unary")).isEqualTo(100_000);
        assertThat(shed("grpc_unary")).isZero();
    }

    @Test
    void theBurstIsJudgedOnceItsFirstSecondIsMeasured() {
        DeadlineAdmission.Lane.Ticket first = unary.admit(50_000);
        unary.admit(50_000);
        answerAll(first, 1000);
        clock.addAndGet(SECOND);

        assertThatThrownBy(() -> unary.admit(1))
                .isInstanceOf(OverloadedException.class)
                .hasMessage("the aggregator is busy: grpc/unary would take about 99.0 s for 1 more squares at its"
                        + " recent 1000 squares/s, more than 10000 ms (half of the deadline); retry later");
        assertThat(unary.rate()).isEqualTo(1000);
    }

    @Test
    void aPathIsMeasuredAfterASecondOfWorkEvenWhileItsFirstRequestRuns() {
        DeadlineAdmission.Lane.Ticket first = unary.admit(3000);
        answerAll(first, 2000);
        clock.addAndGet(SECOND);

        unary.admit(10_000);

        assertThat(unary.rate()).isEqualTo(2000);
        assertThatThrownBy(() -> unary.admit(20_000)).isInstanceOf(OverloadedException.class);
    }

    @Test
    void admitsWhatThePathCanAnswerWithinTheLongestWaitAndShedsTheRest() {
        measure(unary, 1000, 1);
        assertThat(unary.rate()).isEqualTo(1000);

        unary.admit(5000);
        unary.admit(5000);

        assertThatThrownBy(() -> unary.admit(1))
                .isInstanceOf(OverloadedException.class)
                .hasMessage(
                        "the aggregator is busy: grpc/unary would take about 10.0 s for 1 more squares at its recent"
                                + " 1000 squares/s, more than 10000 ms (half of the deadline); retry later")
                .satisfies(e -> assertThat(((OverloadedException) e).retryAfterSeconds())
                        .isEqualTo(1));
        assertThat(squares("grpc_unary")).as("a shed request takes nothing").isEqualTo(10_000);
        assertThat(shed("grpc_unary")).isEqualTo(1);
    }

    @Test
    void theFirstSecondWithAnswersAfterAStallRestoresTheRateWhole() {
        measure(unary, 1000, 1);
        DeadlineAdmission.Lane.Ticket stalled = unary.admit(2000);
        stallFor(2);
        assertThatThrownBy(() -> unary.admit(1)).isInstanceOf(OverloadedException.class);
        assertThat(unary.rate()).isZero();

        answerAll(stalled, 800);
        clock.addAndGet(SECOND);
        stalled.close();

        assertThat(unary.rate()).as("800 squares in the second after the stall").isEqualTo(800);
    }

    @Test
    void answeredSquaresMakeRoom() {
        measure(unary, 1000, 1);
        DeadlineAdmission.Lane.Ticket first = unary.admit(10_000);
        assertThatThrownBy(() -> unary.admit(1000)).isInstanceOf(OverloadedException.class);

        for (int i = 0; i < 1000; i++) {
            first.answered();
        }

        unary.admit(1000);
        assertThat(squares("grpc_unary")).isEqualTo(10_000);
    }

    @Test
    void aPathWithNothingAdmittedAdmitsEvenWhatItCannotAnswerInTime() {
        measure(unary, 10, 1);

        DeadlineAdmission.Lane.Ticket alone = unary.admit(100_000);

        assertThatThrownBy(() -> unary.admit(1)).isInstanceOf(OverloadedException.class);
        alone.close();
        unary.admit(100_000);
    }

    @Test
    void aClosedRequestGivesUpItsUnansweredSquaresAndLateAnswersCountNowhere() {
        DeadlineAdmission.Lane.Ticket ticket = unary.admit(100);
        ticket.answered();

        ticket.close();
        ticket.answered();
        ticket.close();

        assertThat(squares("grpc_unary")).isZero();
        unary.admit(5);
        assertThat(squares("grpc_unary")).isEqualTo(5);
    }

    @Test
    void aRequestAnswersNoMoreThanItsSquares() {
        measure(unary, 1000, 1);
        DeadlineAdmission.Lane.Ticket ticket = unary.admit(2);
        unary.admit(3);

        ticket.answered();
        ticket.answered();
        ticket.answered();

        assertThat(squares("grpc_unary")).isEqualTo(3);
    }

    @Test
    void idleTimeDoesNotCountAgainstThePathsRate() {
        DeadlineAdmission.Lane.Ticket first = unary.admit(1000);
        answerAll(first, 1000);
        clock.addAndGet(SECOND / 2);
        first.close();
        clock.addAndGet(60 * SECOND);
        DeadlineAdmission.Lane.Ticket second = unary.admit(1000);
        answerAll(second, 1000);
        clock.addAndGet(SECOND / 2);
        second.close();

        assertThat(unary.rate()).as("2000 squares in 1 s of busy time").isEqualTo(2000);
    }

    @Test
    void theRateIsTheLatestSecondsWhetherSlowerOrFaster() {
        measure(unary, 4000, 1);
        measure(unary, 1000, 1);

        assertThat(unary.rate()).isEqualTo(1000);
        measure(unary, 3000, 1);
        assertThat(unary.rate()).isEqualTo(3000);
        measure(unary, 2500, 1);
        assertThat(unary.rate()).isEqualTo(2500);
    }

    @Test
    void aPathIsJudgedOnlyOnceItHasWorkedForTheWarmUp() {
        DeadlineAdmission warming = admission(
                Duration.ofSeconds(10),
                new DeadlineAdmission.WarmUp(Duration.ofSeconds(5), 0, Double.MAX_VALUE, Duration.ZERO));
        DeadlineAdmission.Lane rest = warming.lane("rest_unary");
        for (int second = 1; second < 5; second++) {
            measure(rest, 300, 1);
        }
        DeadlineAdmission.Lane.Ticket longRunning = rest.admit(1000);
        for (int request = 0; request < 100; request++) {
            rest.admit(1000);
        }
        assertThat(rest.rate()).as("measured, but not judged by yet").isEqualTo(300);

        answerAll(longRunning, 300);
        clock.addAndGet(SECOND);

        assertThatThrownBy(() -> rest.admit(1))
                .isInstanceOf(OverloadedException.class)
                .hasMessageStartingWith("the aggregator is busy: rest/unary would take about 335.7 s");
    }

    @Test
    void aPathIsJudgedOnlyOnceItHasAnsweredTheWarmUpsSquares() {
        DeadlineAdmission warming = admission(
                Duration.ofSeconds(10),
                new DeadlineAdmission.WarmUp(Duration.ZERO, 20_000, Double.MAX_VALUE, Duration.ofDays(1)));
        DeadlineAdmission.Lane rest = warming.lane("rest_unary");
        measure(rest, 19_999, 10);
        rest.admit(1000);
        for (int request = 0; request < 100; request++) {
            rest.admit(1000);
        }
        measure(rest, 1, 1);

        assertThatThrownBy(() -> rest.admit(1))
                .isInstanceOf(OverloadedException.class)
                .hasMessageStartingWith("the aggregator is busy: rest/unary would take about 50.5 s");
    }

    @Test
    void aPathIsNotJudgedWhileTheJitCompilesMoreThanItsShareAndOnceWarmItStaysSo() {
        DeadlineAdmission warming = admission(
                Duration.ofSeconds(10), new DeadlineAdmission.WarmUp(Duration.ZERO, 0, 0.1, Duration.ofDays(1)));
        DeadlineAdmission.Lane rest = warming.lane("rest_unary");
        jit.addAndGet(SECOND / 5);
        measure(rest, 100, 1);
        DeadlineAdmission.Lane.Ticket first = rest.admit(1000);
        rest.admit(1000);
        assertThat(shed("rest_unary"))
                .as("a second in which the JIT compiled 20 %% of it")
                .isZero();

        jit.addAndGet(SECOND / 10);
        measure(rest, 100, 1);
        assertThatThrownBy(() -> rest.admit(1))
                .as("a second in which it compiled 10 %% of it: 2000 squares at 100 a second")
                .isInstanceOf(OverloadedException.class);

        jit.addAndGet(SECOND);
        answerAll(first, 100);
        clock.addAndGet(SECOND);
        first.close();
        assertThatThrownBy(() -> rest.admit(1))
                .as("warm once, warm: 1001 squares at 100 a second")
                .isInstanceOf(OverloadedException.class);
    }

    @Test
    void aPathWhoseJitNeverSettlesIsJudgedAfterTheLongestWarmUp() {
        DeadlineAdmission warming = admission(
                Duration.ofSeconds(10),
                new DeadlineAdmission.WarmUp(Duration.ofSeconds(1), 1_000_000, 0.1, Duration.ofSeconds(3)));
        DeadlineAdmission.Lane rest = warming.lane("rest_unary");
        for (int second = 0; second < 2; second++) {
            jit.addAndGet(SECOND);
            measure(rest, 100, 1);
        }
        rest.admit(1000);
        rest.admit(1000);

        jit.addAndGet(SECOND);
        measure(rest, 100, 1);

        assertThatThrownBy(() -> rest.admit(1))
                .as("3 s busy: 2001 squares at 100 a second")
                .isInstanceOf(OverloadedException.class);
    }

    @Test
    void aRateMeasuredWithFewerRequestsOpenIsScaledUpAtMostToTheRestOfTheDeadline() {
        DeadlineAdmission halfTheDeadline = admission(Duration.ofSeconds(20), DeadlineAdmission.WarmUp.NONE);
        DeadlineAdmission.Lane rest = halfTheDeadline.lane("rest_unary");
        measure(rest, 1000, 1);

        rest.admit(10_000);
        rest.admit(10_000);

        assertThatThrownBy(() -> rest.admit(1))
                .isInstanceOf(OverloadedException.class)
                .hasMessage("the aggregator is busy: rest/unary would take about 10.0 s for 1 more squares at its"
                        + " recent 2000 squares/s, more than 10000 ms (half of the deadline); retry later");
        assertThat(rest.rate()).as("as measured, with one request open").isEqualTo(1000);
    }

    @Test
    void aRateMeasuredWithAsManyRequestsOpenIsNotScaledUp() {
        DeadlineAdmission halfTheDeadline = admission(Duration.ofSeconds(20), DeadlineAdmission.WarmUp.NONE);
        DeadlineAdmission.Lane rest = halfTheDeadline.lane("rest_unary");
        DeadlineAdmission.Lane.Ticket first = rest.admit(1000);
        DeadlineAdmission.Lane.Ticket second = rest.admit(1000);
        answerAll(first, 1000);
        answerAll(second, 1000);
        clock.addAndGet(SECOND);
        first.close();
        second.close();

        rest.admit(10_000);

        assertThatThrownBy(() -> rest.admit(10_001))
                .isInstanceOf(OverloadedException.class)
                .hasMessageContaining("would take about 10.0 s for 10001 more squares at its recent 2000 squares/s");
    }

    @Test
    void aDeadlineShorterThanTheLongestWaitIsRefused() {
        assertThatThrownBy(() -> new DeadlineAdmission(
                        Duration.ofSeconds(10),
                        Duration.ofSeconds(5),
                        "half of the deadline",
                        DeadlineAdmission.WarmUp.NONE,
                        Duration.ofSeconds(1),
                        new DeadlineAdmission.Clocks(clock::get, jit::get),
                        registry))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("the deadline PT5S must be at least the longest expected wait PT10S");
    }

    @Test
    void aWarmingPathIsJudgedByItsLatestSecondNotItsColdFirst() {
        measure(unary, 300, 1);
        measure(unary, 20_000, 1);

        for (int request = 0; request < 100; request++) {
            unary.admit(1000);
        }
        assertThat(shed("grpc_unary"))
                .as("100,000 squares take 5 s at 20,000 a second")
                .isZero();
    }

    @Test
    void pathsAreJudgedApart() {
        DeadlineAdmission.Lane stream = admission.lane("grpc_stream");
        measure(stream, 100_000, 1);
        measure(unary, 10, 1);
        unary.admit(1000);

        stream.admit(1000);
        stream.admit(1000);

        assertThatThrownBy(() -> unary.admit(1)).isInstanceOf(OverloadedException.class);
        assertThat(admission.lane("grpc_stream")).isSameAs(stream);
        assertThat(shed("grpc_stream")).isZero();
        assertThat(registry.get("aggregator.admission.deadline.rate")
                        .tag("transport", "grpc_unary")
                        .gauge()
                        .value())
                .isEqualTo(10);
    }

    @Test
    void twoSecondsWithoutAnswersStopAllButTheRequestsAlreadyIn() {
        measure(unary, 1000, 1);
        unary.admit(10);
        stallFor(2);

        assertThatThrownBy(() -> unary.admit(1)).isInstanceOf(OverloadedException.class);
        assertThat(unary.rate()).isZero();
    }

    @Test
    void oneSlowSecondDoesNotShedWhatTheSecondBeforeItAnswersInTime() {
        measure(unary, 1000, 1);
        measure(unary, 100, 1);

        unary.admit(5000);
        unary.admit(5000);

        assertThat(shed("grpc_unary"))
                .as("10,000 squares in 10 s at 1000 a second")
                .isZero();
        assertThat(unary.rate()).as("the latest second's").isEqualTo(100);
        assertThatThrownBy(() -> unary.admit(1))
                .isInstanceOf(OverloadedException.class)
                .hasMessageContaining("at its recent 1000 squares/s");
    }

    @Test
    void saysItsLongestWait() {
        assertThat(registry.get("aggregator.admission.deadline.max.wait")
                        .gauge()
                        .value())
                .isEqualTo(10);
    }

    /**
     * Seconds of busy time without an answer, each its own window: all but the last end with a request of no squares,
     * which a stalled path still admits while the second before it was a good one; the next admission ends the last.
     */
    private void stallFor(int seconds) {
        for (int second = 1; second < seconds; second++) {
            clock.addAndGet(SECOND);
            unary.admit(0).close();
        }
        clock.addAndGet(SECOND);
    }

    /** Admission with a longest wait of 10 s, on the test's clocks and registry. */
    private DeadlineAdmission admission(Duration deadline, DeadlineAdmission.WarmUp warmUp) {
        return new DeadlineAdmission(
                Duration.ofSeconds(10),
                deadline,
                "half of the deadline",
                warmUp,
                Duration.ofSeconds(1),
                new DeadlineAdmission.Clocks(clock::get, jit::get),
                registry);
    }

    /** One request of n squares, all answered over the given seconds of busy time: a window of its own. */
    private void measure(DeadlineAdmission.Lane lane, int n, int seconds) {
        DeadlineAdmission.Lane.Ticket ticket = lane.admit(n);
        answerAll(ticket, n);
        clock.addAndGet(seconds * SECOND);
        ticket.close();
    }

    private static void answerAll(DeadlineAdmission.Lane.Ticket ticket, int n) {
        for (int i = 0; i < n; i++) {
            ticket.answered();
        }
    }

    private double squares(String transport) {
        return registry.get("aggregator.admission.deadline.squares")
                .tag("transport", transport)
                .gauge()
                .value();
    }

    private double shed(String transport) {
        return registry.get("aggregator.admission.deadline.shed")
                .tag("transport", transport)
                .counter()
                .count();
    }
}
