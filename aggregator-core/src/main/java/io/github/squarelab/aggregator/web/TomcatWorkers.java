package io.github.squarelab.aggregator.web;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;
import org.apache.coyote.AbstractProtocol;
import org.apache.coyote.ProtocolHandler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tomcat's worker threads, first come first served within each kind: answers of finished fan-outs first, then work
 * from the poller once a request place is free or it has waited {@code connectionWait}, as a request left unread costs
 * nothing and one read at once would only be shed (docs/performance.md, "Tomcat's worker threads").
 */
public final class TomcatWorkers implements Executor {

    private static final Logger log = LoggerFactory.getLogger(TomcatWorkers.class);
    private static final String POLLER_SUFFIX = "-Poller";

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition workArrived = lock.newCondition();
    private final ArrayDeque<Runnable> answers = new ArrayDeque<>();
    private final ArrayDeque<Waiting> connections = new ArrayDeque<>();
    private final List<Worker> workers = new ArrayList<>();
    private final BooleanSupplier placeFree;
    private final long connectionWaitNanos;
    private final LongSupplier nanoClock;
    private boolean shutDown;

    /**
     * @param placeFree whether a fan-out request would find a place now
     * @param namePrefix the threads' names, numbered from 1
     */
    TomcatWorkers(
            int threads,
            String namePrefix,
            BooleanSupplier placeFree,
            Duration connectionWait,
            LongSupplier nanoClock) {
        if (threads < 1) {
            throw new IllegalArgumentException("Tomcat needs at least one worker thread, got " + threads);
        }
        this.placeFree = placeFree;
        this.connectionWaitNanos = connectionWait.toNanos();
        this.nanoClock = nanoClock;
        for (int i = 1; i <= threads; i++) {
            Worker worker = new Worker(namePrefix + i);
            workers.add(worker);
            worker.start();
        }
    }

    /** Puts these workers on Tomcat's connector: each Spring Boot generation's {@code WebServerWiring} calls it. */
    public void runOn(ProtocolHandler protocol) {
        if (protocol instanceof AbstractProtocol<?> tomcatProtocol) {
            tomcatProtocol.setExecutor(this);
        }
    }

    @Override
    public void execute(Runnable work) {
        boolean fromConnection = fromConnection();
        lock.lock();
        try {
            if (shutDown) {
                throw new RejectedExecutionException("Tomcat's workers are shut down");
            }
            if (fromConnection) {
                connections.add(new Waiting(work, nanoClock.getAsLong()));
            } else {
                answers.add(work);
            }
            workArrived.signal();
        } finally {
            lock.unlock();
        }
    }

    /** Called when a request gives its place back: the first connection waiting may now be read. */
    void placeFreed() {
        lock.lock();
        try {
            if (!connections.isEmpty()) {
                workArrived.signal();
            }
        } finally {
            lock.unlock();
        }
    }

    /** Stops taking work; the threads finish what they run and end. Spring calls it when the context closes. */
    void shutdown() {
        lock.lock();
        try {
            shutDown = true;
            workArrived.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** Whether every thread has ended, waiting up to {@code timeout} for them. */
    boolean awaitTermination(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        for (Worker worker : workers) {
            worker.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
        }
        return workers.stream().noneMatch(Thread::isAlive);
    }

    /** Tomcat's poller hands over connections with data; its workers hand on what they cannot finish themselves. */
    private static boolean fromConnection() {
        Thread current = Thread.currentThread();
        return current instanceof Worker || current.getName().endsWith(POLLER_SUFFIX);
    }

    /** The next work to run, waiting for it; null once shut down. */
    private Runnable take() throws InterruptedException {
        lock.lock();
        try {
            while (true) {
                if (shutDown) {
                    return null;
                }
                if (!answers.isEmpty()) {
                    return answers.poll();
                }
                Waiting first = connections.peek();
                if (first == null) {
                    workArrived.await();
                    continue;
                }
                long waitedLeft = first.queuedAt + connectionWaitNanos - nanoClock.getAsLong();
                if (waitedLeft <= 0 || placeFree.getAsBoolean()) {
                    connections.poll();
                    return first.work;
                }
                workArrived.awaitNanos(waitedLeft);
            }
        } finally {
            lock.unlock();
        }
    }

    private record Waiting(Runnable work, long queuedAt) {}

    private final class Worker extends Thread {
        Worker(String name) {
            super(name);
            setDaemon(true);
        }

        @Override
        public void run() {
            try {
                for (Runnable work = take(); work != null; work = take()) {
                    try {
                        work.run();
                    } catch (RuntimeException | Error e) {
                        log.error("Tomcat work failed on {}", getName(), e);
                    }
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
