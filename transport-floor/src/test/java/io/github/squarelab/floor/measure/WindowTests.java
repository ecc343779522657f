package io.github.squarelab.floor.measure;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class WindowTests {

    @Test
    void measuresTheAnswersOfEveryThreadWhileOpenAndChecksThemAll() throws Exception {
        Window window = new Window();
        window.answered(1_000);
        window.open();
        List<Thread> eventLoops = new ArrayList<>();
        for (int loop = 0; loop < 4; loop++) {
            Thread eventLoop = new Thread(() -> {
                for (int answer = 0; answer < 10_000; answer++) {
                    window.answered(1_000);
                }
            });
            eventLoop.start();
            eventLoops.add(eventLoop);
        }
        for (Thread eventLoop : eventLoops) {
            eventLoop.join();
        }
        window.close();
        window.answered(1_000);

        assertThat(window.latencies().getTotalCount()).isEqualTo(40_000);
        assertThat(window.answersChecked()).isEqualTo(40_002);
    }
}
