package io.github.squarelab.aggregator.admission;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class AdmissionBudgetTests {

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final AdmissionBudget budget = new AdmissionBudget(1000, registry);

    @Test
    void admitsWhatFitsAndShedsWhatDoesNot() {
        assertThat(budget.tryAdmit(600)).isTrue();
        assertThat(budget.tryAdmit(400)).isTrue();
        assertThat(budget.tryAdmit(1)).isFalse();
        assertThat(registry.get("aggregator.admission.squares").gauge().value()).isEqualTo(1000);

        budget.release(400);

        assertThat(budget.tryAdmit(401)).isFalse();
        assertThat(budget.tryAdmit(400)).isTrue();
    }

    @Test
    void zeroSquaresAlwaysFit() {
        assertThat(budget.tryAdmit(1000)).isTrue();
        assertThat(budget.tryAdmit(0)).isTrue();
    }

    @Test
    void aRequestLargerThanTheBudgetRunsAloneAndOnlyAlone() {
        assertThat(budget.tryAdmit(5000)).isTrue();
        assertThat(budget.tryAdmit(1)).isFalse();
        budget.release(5000);

        assertThat(budget.tryAdmit(1)).isTrue();
        assertThat(budget.tryAdmit(5000)).isFalse();
    }

    @Test
    void neverHoldsMoreThanTheBudgetUnderConcurrentAdmissions() throws Exception {
        AtomicInteger most = new AtomicInteger();
        AtomicInteger held = new AtomicInteger();
        ExecutorService threads = Executors.newFixedThreadPool(8);
        CountDownLatch done = new CountDownLatch(8);
        for (int t = 0; t < 8; t++) {
            threads.execute(() -> {
                for (int i = 0; i < 20_000; i++) {
                    if (budget.tryAdmit(300)) {
                        most.accumulateAndGet(held.addAndGet(300), Math::max);
                        held.addAndGet(-300);
                        budget.release(300);
                    }
                }
                done.countDown();
            });
        }
        assertThat(done.await(30, TimeUnit.SECONDS)).isTrue();
        threads.shutdown();

        assertThat(most.get()).isBetween(300, 900);
        assertThat(registry.get("aggregator.admission.squares").gauge().value()).isZero();
    }

    @Test
    void theDefaultIsAQuarterOfTheHeapAt256BytesASquareAndAtMost131072() {
        assertThat(AdmissionBudget.defaultFor(64L << 20)).isEqualTo(65_536);
        assertThat(AdmissionBudget.defaultFor(128L << 20)).isEqualTo(131_072);
        assertThat(AdmissionBudget.defaultFor(8L << 30)).isEqualTo(131_072);
        assertThat(registry.get("aggregator.admission.max.squares").gauge().value())
                .isEqualTo(1000);
    }

    @Test
    void aBudgetBelowOneSquareIsRefused() {
        assertThatThrownBy(() -> new AdmissionBudget(0, registry))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("the admission budget must be at least 1 square, got 0");
    }

    @Test
    void retryAfterIsInWholeSecondsRoundedUpAndAtLeastOne() {
        assertThat(new OverloadedException("busy", Duration.ofMillis(1500)).retryAfterSeconds())
                .isEqualTo(2);
        assertThat(new OverloadedException("busy", Duration.ZERO).retryAfterSeconds())
                .isEqualTo(1);
        assertThat(new OverloadedException("busy", Duration.ofSeconds(3)).retryAfterSeconds())
                .isEqualTo(3);
    }
}
