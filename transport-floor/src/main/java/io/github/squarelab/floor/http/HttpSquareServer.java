package io.github.squarelab.floor.http;

import io.github.squarelab.floor.FloorTls;
import io.github.squarelab.floor.SquareServer;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.ssl.SslContext;
import java.net.InetSocketAddress;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.IntToLongFunction;

/**
 * The REST square endpoint on plain Netty, HTTP/1.1 with keep-alive and, on the same port, HTTP/2 cleartext
 * with prior knowledge, or under TLS either one as ALPN chooses (as the REST square service serves them): no
 * framework, no routing table, no metrics; the handlers answer on the event loops, since they never block.
 */
public final class HttpSquareServer implements SquareServer {

    private final SslContext ssl;
    private final EventLoopGroup acceptor;
    private final EventLoopGroup workers;
    private final Channel listener;

    /**
     * @param host the address to listen on, e.g. 127.0.0.1
     * @param port the port, or 0 for one the system chooses
     * @param square what to answer for a number: its square, or something else in tests
     */
    public HttpSquareServer(String host, int port, IntToLongFunction square) {
        this(host, port, square, Optional.empty());
    }

    /**
     * @param tls under TLS, HTTP/2 or HTTP/1.1 as ALPN chooses, as the REST square service's TLS port serves them;
     *     empty for plaintext
     */
    public HttpSquareServer(String host, int port, IntToLongFunction square, Optional<FloorTls> tls) {
        SquareHandler handler = new SquareHandler(square);
        ssl = tls.map(HttpTls::server).orElse(null);
        // Only once the TLS context is made, which may refuse its files: then there are no threads to leak.
        acceptor = NettyTransport.group(1);
        workers = NettyTransport.group(0);
        try {
            listener = new ServerBootstrap()
                    .group(acceptor, workers)
                    .channel(NettyTransport.serverChannel())
                    .childHandler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        protected void initChannel(SocketChannel channel) {
                            if (ssl == null) {
                                channel.pipeline().addLast(new PriorKnowledge(handler, square));
                            } else {
                                channel.pipeline()
                                        .addLast(ssl.newHandler(channel.alloc()), new HttpTls.ByAlpn(handler, square));
                            }
                        }
                    })
                    .bind(host, port)
                    .syncUninterruptibly()
                    .channel();
        } catch (RuntimeException e) {
            shutDownEventLoops();
            throw new IllegalStateException("cannot listen on " + host + ":" + port, e);
        }
    }

    public static String io() {
        return NettyTransport.name();
    }

    /** What its TLS context encrypts with; in plaintext, what one would. */
    @Override
    public String tlsProvider() {
        return ssl != null ? HttpTls.provider(ssl) : HttpTls.provider();
    }

    @Override
    public int port() {
        return ((InetSocketAddress) listener.localAddress()).getPort();
    }

    @Override
    public void awaitTermination() throws InterruptedException {
        listener.closeFuture().sync();
        workers.terminationFuture().sync();
    }

    @Override
    public void close() {
        listener.close().syncUninterruptibly();
        shutDownEventLoops();
    }

    private void shutDownEventLoops() {
        acceptor.shutdownGracefully(0, 2, TimeUnit.SECONDS);
        workers.shutdownGracefully(100, 2000, TimeUnit.MILLISECONDS);
        acceptor.terminationFuture().awaitUninterruptibly(5, TimeUnit.SECONDS);
        workers.terminationFuture().awaitUninterruptibly(5, TimeUnit.SECONDS);
    }
}
