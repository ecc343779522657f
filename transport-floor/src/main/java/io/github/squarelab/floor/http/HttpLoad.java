package io.github.squarelab.floor.http;

import io.github.squarelab.floor.FloorTls;
import io.github.squarelab.floor.Squares;
import io.github.squarelab.floor.measure.FloorFailure;
import io.github.squarelab.floor.measure.Load;
import io.github.squarelab.floor.measure.MeasuredInterval;
import io.github.squarelab.floor.measure.Negotiated;
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
import io.netty.handler.ssl.ApplicationProtocolNames;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.timeout.ReadTimeoutHandler;
import io.netty.util.concurrent.GlobalEventExecutor;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * {@code GET /rest/square/unary/{n}} on {@code connections} keep-alive HTTP/1.1 connections, one call at a
 * time on each, as the aggregator's pool does; or, for rest_h2c, {@code streams} calls in flight spread
 * evenly over HTTP/2 connections (prior knowledge in plaintext). Plain Netty, so nothing but HTTP is on the path; under TLS, the
 * protocol agreed by ALPN, as the aggregator's Reactor Netty client agrees it.
 */
public final class HttpLoad implements Load {

    /** Connecting on loopback takes microseconds; a refused or black-holed port must not hang the run. */
    private static final int CONNECT_TIMEOUT_MILLIS = 2000;
    /** Far more than a bare number needs. */
    private static final int MAX_RESPONSE_BYTES = 64 * 1024;

    private final String name;
    private final String host;
    private final int port;
    /** Connections opened: for rest_h2c at most one per stream, since one with none would idle. */
    private final int connections;
    /** Calls in flight across the connections; for HTTP/1.1 one per connection. */
    private final int streams;
    /** HTTP/2 with prior knowledge instead of HTTP/1.1. */
    private final boolean h2c;

    private final Duration callDeadline;
    /** The one protocol the connections speak, and under TLS offer by ALPN. */
    private final String protocol;
    /** Under TLS, the client's context; null in plaintext. */
    private final SslContext ssl;

    private final AtomicReference<Negotiated> negotiated = new AtomicReference<>();
    private final EventLoopGroup eventLoops;
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
        this(target, connections, callDeadline, Optional.empty());
    }

    /** @param tls under TLS (HTTP/1.1 agreed by ALPN), the CA to trust and any client certificate; else empty */
    public HttpLoad(String target, int connections, Duration callDeadline, Optional<FloorTls> tls) {
        this("rest_unary", target, connections, connections, false, callDeadline, tls);
    }

    private HttpLoad(
            String name,
            String target,
            int connections,
            int streams,
            boolean h2c,
            Duration callDeadline,
            Optional<FloorTls> tls) {
        int colon = target.lastIndexOf(':');
        if (colon <= 0) {
            throw new IllegalArgumentException("the target must be host:port, not " + target);
        }
        this.host = target.substring(0, colon);
        this.port = Integer.parseInt(target.substring(colon + 1));
        this.name = name;
        this.connections = Math.min(connections, streams);
        this.streams = streams;
        this.h2c = h2c;
        this.callDeadline = callDeadline;
        this.exchangesEnded = new CountDownLatch(this.connections);
        this.protocol = h2c ? ApplicationProtocolNames.HTTP_2 : ApplicationProtocolNames.HTTP_1_1;
        this.ssl = tls.map(found -> HttpTls.client(found, protocol)).orElse(null);
        // Only once the TLS context is made, which may refuse its files: then there are no threads to leak.
        this.eventLoops = NettyTransport.group(0);
    }

    /** rest_h2c: {@code streams} calls in flight over {@code connections} HTTP/2 connections, in plaintext. */
    public static HttpLoad h2c(String target, int connections, int streams, Duration callDeadline) {
        return h2c(target, connections, streams, callDeadline, Optional.empty());
    }

    /** rest_h2c, under TLS over HTTP/2 agreed by ALPN (the tls given), else with prior knowledge. */
    public static HttpLoad h2c(
            String target, int connections, int streams, Duration callDeadline, Optional<FloorTls> tls) {
        return new HttpLoad("rest_h2c", target, connections, streams, true, callDeadline, tls);
    }

    public static String io() {
        return NettyTransport.name();
    }

    @Override
    public Optional<Negotiated> negotiated() {
        return Optional.ofNullable(negotiated.get());
    }

    @Override
    public void start(MeasuredInterval interval) throws FloorFailure {
        this.interval = interval;
        String hostHeader = host + ":" + port;
        for (int connection = 0; connection < connections; connection++) {
            ChannelFuture connected =
                    bootstrap(hostHeader, connection).connect(host, port).awaitUninterruptibly();
            if (!connected.isSuccess()) {
                throw new FloorFailure(
                        name + ": cannot connect to " + hostHeader + ": " + connected.cause(), connected.cause());
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
                name + " connections did not end even when closed");
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

    /** Spread evenly: the first {@code streams % connections} connections carry one more. */
    private int streamsOn(int connection) {
        return streams / connections + (connection < streams % connections ? 1 : 0);
    }

    private Bootstrap bootstrap(String hostHeader, int connection) {
        int first = Squares.first(connection);
        return new Bootstrap()
                .group(eventLoops)
                .channel(NettyTransport.socketChannel())
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, CONNECT_TIMEOUT_MILLIS)
                .handler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel channel) {
                        // A connection always has a call in flight, so a deadline without a read is an unanswered call.
                        ReadTimeoutHandler deadline =
                                new ReadTimeoutHandler(callDeadline.toNanos(), TimeUnit.NANOSECONDS);
                        if (ssl != null) {
                            channel.pipeline()
                                    .addLast(
                                            HttpTls.clientHandler(ssl, channel, host, port),
                                            new HttpTls.Checked(protocol, negotiated));
                        }
                        if (h2c) {
                            channel.pipeline()
                                    .addLast(
                                            deadline,
                                            SquareStreams.connection(
                                                    hostHeader,
                                                    first,
                                                    streamsOn(connection),
                                                    interval,
                                                    HttpLoad.this,
                                                    ssl != null));
                            return;
                        }
                        channel.pipeline()
                                .addLast(
                                        new HttpClientCodec(),
                                        new HttpObjectAggregator(MAX_RESPONSE_BYTES),
                                        deadline,
                                        new SquareExchange(hostHeader, first, interval, HttpLoad.this));
                    }
                });
    }
}
