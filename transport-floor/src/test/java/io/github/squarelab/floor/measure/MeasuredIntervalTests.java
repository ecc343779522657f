package io.github.squarelab.floor.measure;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class MeasuredIntervalTests {

    @Test
    void measuresTheAnswersOfEveryThreadWhileOpenAndChecksThemAll() throws Exception {
        MeasuredInterval interval = new MeasuredInterval();
        interval.answered(1_000);
        interval.open();
        List<Thread> eventLoops = new ArrayList<>();
        for (int loop = 0; loop < 4; loop++) {
            Thread eventLoop = new Thread(() -> {
                for (int answer = 0; answer < 10_000; answer++) {
                    interval.answered(1_000);
                }
            });
            eventLoop.start();
            eventLoops.add(eventLoop);
        }
        for (Thread eventLoop : eventLoops) {
            eventLoop.join();
        }
        interval.close();
        interval.answered(1_000);

        assertThat(interval.latencies().getTotalCount()).isEqualTo(40_000);
        assertThat(interval.answersChecked()).isEqualTo(40_002);
    }
}
