package io.github.squarelab.floor.http;

import io.github.squarelab.floor.Squares;
import io.github.squarelab.floor.measure.FloorFailure;
import io.github.squarelab.floor.measure.Load;
import io.github.squarelab.floor.measure.MeasuredInterval;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.timeout.ReadTimeoutHandler;
import io.netty.util.concurrent.GlobalEventExecutor;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * {@code GET /rest/square/unary/{n}} on {@code connections} keep-alive HTTP/1.1 connections, one call at a
 * time on each, as the aggregator's pool does; plain Netty, so nothing but HTTP/1.1 is on the path.
 */
public final class HttpLoad implements Load {

    /** Connecting on loopback takes microseconds; a refused or black-holed port must not hang the run. */
    private static final int CONNECT_TIMEOUT_MILLIS = 2000;
    /** Far more than a bare number needs. */
    private static final int MAX_RESPONSE_BYTES = 64 * 1024;

    private final String host;
    private final int port;
    private final int connections;
    private final Duration callDeadline;
    private final EventLoopGroup eventLoops = NettyTransport.group(0);
    private final ChannelGroup channels = new DefaultChannelGroup(GlobalEventExecutor.INSTANCE);
    private final CountDownLatch exchangesEnded;
    private volatile boolean stopping;
    private volatile boolean givenUp;
    private MeasuredInterval interval;

    /**
     * @param target the server as host:port
     * @param connections how many connections, and so calls in flight
     * @param callDeadline how long one call may go unanswered before the run fails
     */
    public HttpLoad(String target, int connections, Duration callDeadline) {
        int colon = target.lastIndexOf(':');
        if (colon <= 0) {
            throw new IllegalArgumentException("the target must be host:port, not " + target);
        }
        this.host = target.substring(0, colon);
        this.port = Integer.parseInt(target.substring(colon + 1));
        this.connections = connections;
        this.callDeadline = callDeadline;
        this.exchangesEnded = new CountDownLatch(connections);
    }

    public static String io() {
        return NettyTransport.name();
    }

    @Override
    public void start(MeasuredInterval interval) throws FloorFailure {
        this.interval = interval;
        String hostHeader = host + ":" + port;
        for (int connection = 0; connection < connections; connection++) {
            int first = Squares.first(connection);
            ChannelFuture connected =
                    bootstrap(hostHeader, first).connect(host, port).awaitUninterruptibly();
            if (!connected.isSuccess()) {
                throw new FloorFailure(
                        "rest_unary: cannot connect to " + hostHeader + ": " + connected.cause(), connected.cause());
            }
            channels.add(connected.channel());
        }
    }

    /** Each connection closes after its last answer; after {@code timeout} closing them cuts off the rest. */
    @Override
    public void stop(Duration timeout) throws InterruptedException {
        stopping = true;
        Load.awaitEnd(
                interval,
                exchangesEnded,
                timeout,
                () -> {
                    givenUp = true;
                    channels.close();
                },
                "rest_unary connections did not end even when closed");
    }

    @Override
    public void close() {
        eventLoops.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
    }

    boolean isStopping() {
        return stopping;
    }

    boolean hasGivenUp() {
        return givenUp;
    }

    void exchangeEnded() {
        exchangesEnded.countDown();
    }

    private Bootstrap bootstrap(String hostHeader, int first) {
        return new Bootstrap()
                .group(eventLoops)
                .channel(NettyTransport.socketChannel())
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, CONNECT_TIMEOUT_MILLIS)
                .handler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel channel) {
                        // A connection always has a call in flight, so a deadline without a read is an unanswered call.
                        channel.pipeline()
                                .addLast(
                                        new HttpClientCodec(),
                                        new HttpObjectAggregator(MAX_RESPONSE_BYTES),
                                        new ReadTimeoutHandler(callDeadline.toNanos(), TimeUnit.NANOSECONDS),
                                        new SquareExchange(hostHeader, first, interval, HttpLoad.this));
                    }
                });
    }
}
