package io.github.squarelab.aggregator.web;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class TomcatWorkersTests {

    private static final String POLLER = "http-nio-8080-Poller";

    private final AtomicBoolean placeFree = new AtomicBoolean(true);
    private final List<String> ran = new CopyOnWriteArrayList<>();
    private TomcatWorkers workers;

    @AfterEach
    void shutDown() throws InterruptedException {
        workers.shutdown();
        assertThat(workers.awaitTermination(Duration.ofSeconds(5))).isTrue();
    }

    @Test
    void anAnswerHandedBackRunsBeforeConnectionsThatCameFirstAndEachKindKeepsItsOrder() throws Exception {
        workers = start(1, Duration.ofHours(1));
        CountDownLatch release = occupyTheOnlyThread();

        fromThread(POLLER, () -> workers.execute(record("connection 1")));
        fromThread(POLLER, () -> workers.execute(record("connection 2")));
        fromThread("square-client-event-loop-1", () -> workers.execute(record("answer 1")));
        fromThread(POLLER, () -> workers.execute(record("connection 3")));
        fromThread("grpc-default-executor-0", () -> workers.execute(record("answer 2")));
        release.countDown();

        awaitRan(5);
        assertThat(ran).containsExactly("answer 1", "answer 2", "connection 1", "connection 2", "connection 3");
    }

    @Test
    void aConnectionWaitsUnreadWhileEveryPlaceIsTakenAndRunsOnceOneIsGivenBack() throws Exception {
        workers = start(2, Duration.ofHours(1));
        placeFree.set(false);
        fromThread(POLLER, () -> workers.execute(record("connection")));
        fromThread("square-client-event-loop-1", () -> workers.execute(record("answer")));

        awaitRan(1);
        Thread.sleep(300);
        assertThat(ran).containsExactly("answer");

        placeFree.set(true);
        workers.placeFreed();
        awaitRan(2);
        assertThat(ran).containsExactly("answer", "connection");
    }

    @Test
    void aConnectionThatFindsNoPlaceIsReadOnceItHasWaitedTheConnectionWait() throws Exception {
        Duration wait = Duration.ofMillis(200);
        workers = start(1, wait);
        placeFree.set(false);
        long start = System.nanoTime();
        fromThread(POLLER, () -> workers.execute(record("connection")));

        awaitRan(1);
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(wait);
    }

    @Test
    void workHandedOnByAWorkerQueuesWithTheConnections() throws Exception {
        workers = start(1, Duration.ofHours(1));
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch queued = new CountDownLatch(1);
        workers.execute(() -> {
            fromThread(POLLER, () -> workers.execute(record("connection")));
            workers.execute(record("from a worker"));
            queued.countDown();
            await(release);
        });
        assertThat(queued.await(5, TimeUnit.SECONDS)).isTrue();
        fromThread("square-client-event-loop-1", () -> workers.execute(record("answer")));
        release.countDown();

        awaitRan(3);
        assertThat(ran).containsExactly("answer", "connection", "from a worker");
    }

    @Test
    void itsThreadsAreNamedAndNumbered() throws Exception {
        workers = start(2, Duration.ofHours(1));
        List<String> names = new CopyOnWriteArrayList<>();
        CountDownLatch bothBusy = new CountDownLatch(2);
        for (int i = 0; i < 2; i++) {
            workers.execute(() -> {
                names.add(Thread.currentThread().getName());
                bothBusy.countDown();
                await(bothBusy);
            });
        }
        assertThat(bothBusy.await(5, TimeUnit.SECONDS)).isTrue();
        assertThat(names).containsExactlyInAnyOrder("test-exec-1", "test-exec-2");
    }

    private TomcatWorkers start(int threads, Duration connectionWait) {
        return new TomcatWorkers(threads, "test-exec-", placeFree::get, connectionWait, System::nanoTime);
    }

    private CountDownLatch occupyTheOnlyThread() throws InterruptedException {
        CountDownLatch busy = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        workers.execute(() -> {
            busy.countDown();
            await(release);
        });
        assertThat(busy.await(5, TimeUnit.SECONDS)).isTrue();
        return release;
    }

    private void awaitRan(int count) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (ran.size() < count && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
    }

    private Runnable record(String name) {
        return () -> ran.add(name);
    }

    private static void fromThread(String name, Runnable action) {
        Thread thread = new Thread(action, name);
        thread.start();
        try {
            thread.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
