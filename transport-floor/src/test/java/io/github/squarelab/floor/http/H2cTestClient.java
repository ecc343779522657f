package io.github.squarelab.floor.http;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http2.Http2FrameCodecBuilder;
import io.netty.handler.codec.http2.Http2MultiplexHandler;
import io.netty.handler.codec.http2.Http2StreamChannel;
import io.netty.handler.codec.http2.Http2StreamChannelBootstrap;
import io.netty.handler.codec.http2.Http2StreamFrameToHttpObjectCodec;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * An HTTP/2 client with prior knowledge built another way than the floor's (a channel per stream, as Reactor
 * Netty's), so that the server is checked against more than the floor's own client.
 */
final class H2cTestClient implements AutoCloseable {

    private final EventLoopGroup eventLoop = new NioEventLoopGroup(1);
    private final Channel connection;

    H2cTestClient(int port) {
        connection = new Bootstrap()
                .group(eventLoop)
                .channel(NioSocketChannel.class)
                .handler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel channel) {
                        channel.pipeline()
                                .addLast(
                                        Http2FrameCodecBuilder.forClient().build(),
                                        new Http2MultiplexHandler(new ChannelInboundHandlerAdapter()));
                    }
                })
                .connect("127.0.0.1", port)
                .syncUninterruptibly()
                .channel();
    }

    /** What a test reads of an answer, copied out of Netty's buffers. */
    record Answer(int status, HttpHeaders headers, String body) {}

    /** One GET on a stream of its own. */
    Answer get(String path) throws Exception {
        CompletableFuture<Answer> answer = new CompletableFuture<>();
        Http2StreamChannel stream = new Http2StreamChannelBootstrap(connection)
                .handler(new ChannelInitializer<Http2StreamChannel>() {
                    @Override
                    protected void initChannel(Http2StreamChannel channel) {
                        channel.pipeline()
                                .addLast(
                                        new Http2StreamFrameToHttpObjectCodec(false),
                                        new HttpObjectAggregator(64 * 1024),
                                        new SimpleChannelInboundHandler<FullHttpResponse>() {
                                            @Override
                                            protected void channelRead0(
                                                    ChannelHandlerContext ctx, FullHttpResponse response) {
                                                answer.complete(new Answer(
                                                        response.status().code(),
                                                        response.headers().copy(),
                                                        response.content().toString(StandardCharsets.US_ASCII)));
                                            }

                                            @Override
                                            public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                                                answer.completeExceptionally(cause);
                                            }
                                        });
                    }
                })
                .open()
                .syncUninterruptibly()
                .getNow();
        DefaultFullHttpRequest request = new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.GET, path);
        request.headers().set(HttpHeaderNames.HOST, "127.0.0.1");
        stream.writeAndFlush(request).syncUninterruptibly();
        return answer.get(5, TimeUnit.SECONDS);
    }

    @Override
    public void close() {
        connection.close().syncUninterruptibly();
        eventLoop.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }
}
