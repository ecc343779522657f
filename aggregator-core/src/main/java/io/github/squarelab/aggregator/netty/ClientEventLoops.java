package io.github.squarelab.aggregator.netty;

import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.util.concurrent.EventExecutor;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import reactor.netty.resources.LoopResources;

/**
 * The aggregator's one Netty: the event loops that the REST client and the gRPC channel both run on (epoll where
 * Reactor Netty finds it, NIO otherwise) and the pooled allocator both take their buffers from. Before, grpc-java
 * brought its own shaded Netty, with its own classes, compiled code, event loops and pooled direct buffers, beside
 * Reactor Netty's (docs/performance.md, "What is left", Memory).
 */
public final class ClientEventLoops implements AutoCloseable {

    /**
     * The clients are closed before the loops (the gRPC channel shut down, the REST pools disposed), and Tomcat has
     * finished its requests before that: what is left on the loops is closing connections, which runs before they
     * stop; a connection still open after this is closed.
     */
    private static final Duration SHUTDOWN_TIMEOUT = Duration.ofSeconds(5);

    /**
     * How often every loop wakes, whatever its traffic: Netty frees a timer cancelled from another thread (each gRPC
     * call's deadline) only when its loop wakes (docs/performance.md, "Cancelled deadline timers").
     */
    static final Duration WAKE_INTERVAL = Duration.ofMillis(100);

    private final LoopResources loops;

    /** @param threadPrefix the loops' thread names, before {@code -epoll-} or {@code -nio-} and a number */
    public ClientEventLoops(String threadPrefix) {
        // As many as Reactor Netty's own global loops, which the REST client ran on before: one per core, at least
        // 4 (reactor.netty.ioWorkerCount); daemon threads.
        this.loops = LoopResources.create(threadPrefix, LoopResources.DEFAULT_IO_WORKER_COUNT, true);
        long interval = WAKE_INTERVAL.toNanos();
        for (EventExecutor loop : group()) {
            loop.scheduleAtFixedRate(() -> {}, interval, interval, TimeUnit.NANOSECONDS);
        }
    }

    /** For Reactor Netty's {@code runOn}: its clients take the loops through a view that keeps a caller on its loop. */
    public LoopResources loops() {
        return loops;
    }

    /**
     * The same loops, for grpc-java: the group itself, not the view Reactor Netty's clients get (which hands a caller
     * already on a loop that same loop), so that gRPC's connections, one per replica, spread over the loops as they
     * did over grpc-java's own.
     */
    public EventLoopGroup group() {
        return loops.onServer(LoopResources.DEFAULT_NATIVE);
    }

    /** The socket channel that goes with {@link #group()}: epoll's when the loops are epoll's. */
    public Class<? extends SocketChannel> socketChannelType() {
        return loops.onChannelClass(SocketChannel.class, group());
    }

    /**
     * Netty's default pooled allocator, which Reactor Netty uses unless told otherwise; grpc-java otherwise makes a
     * pooled allocator of its own.
     */
    public ByteBufAllocator allocator() {
        return ByteBufAllocator.DEFAULT;
    }

    @Override
    public void close() {
        loops.disposeLater(Duration.ZERO, SHUTDOWN_TIMEOUT).block();
    }
}
