package io.github.squarelab.floor.http;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpServerKeepAliveHandler;
import io.netty.handler.codec.http2.Http2CodecUtil;
import java.util.List;
import java.util.function.IntToLongFunction;

/**
 * Picks a connection's protocol from its first bytes: the HTTP/2 connection preface (a client with prior
 * knowledge) makes it HTTP/2, anything else HTTP/1.1; then it leaves, handing on what it read. Unlike
 * Netty's CleartextHttp2ServerUpgradeHandler it leaves no upgrade handler on HTTP/1.1 connections, so
 * rest_unary's server pipeline stays what it was; an {@code Upgrade: h2c} request is answered in HTTP/1.1.
 */
final class PriorKnowledge extends ByteToMessageDecoder {

    private static final ByteBuf PREFACE = Http2CodecUtil.connectionPrefaceBuf();

    private final SquareHandler http1;
    private final IntToLongFunction square;

    PriorKnowledge(SquareHandler http1, IntToLongFunction square) {
        this.http1 = http1;
        this.square = square;
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        int length = Math.min(in.readableBytes(), PREFACE.readableBytes());
        if (!ByteBufUtil.equals(PREFACE, PREFACE.readerIndex(), in, in.readerIndex(), length)) {
            http1(ctx.pipeline(), http1).remove(this);
        } else if (length == PREFACE.readableBytes()) {
            http2(ctx.pipeline(), square).remove(this);
        }
    }

    /** The HTTP/1.1 server's handlers, whether the first bytes or ALPN (under TLS, {@link HttpTls}) chose it. */
    static ChannelPipeline http1(ChannelPipeline pipeline, SquareHandler http1) {
        return pipeline.addLast(new HttpServerCodec(), new HttpServerKeepAliveHandler(), http1);
    }

    /** The HTTP/2 server's handler, whether the connection preface or ALPN chose it. */
    static ChannelPipeline http2(ChannelPipeline pipeline, IntToLongFunction square) {
        return pipeline.addLast(Http2Answers.connection(square));
    }
}
