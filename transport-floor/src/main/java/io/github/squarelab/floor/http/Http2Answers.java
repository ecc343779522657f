package io.github.squarelab.floor.http;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http2.DefaultHttp2Headers;
import io.netty.handler.codec.http2.Http2ConnectionEncoder;
import io.netty.handler.codec.http2.Http2ConnectionHandler;
import io.netty.handler.codec.http2.Http2ConnectionHandlerBuilder;
import io.netty.handler.codec.http2.Http2FrameAdapter;
import io.netty.handler.codec.http2.Http2Headers;
import io.netty.handler.codec.http2.Http2Settings;
import java.util.function.IntToLongFunction;

/**
 * The square endpoint over HTTP/2, in the shape of Netty's HTTP/2 HelloWorldServer: Netty's
 * Http2ConnectionHandler (the layer grpc-netty builds on, with no per-stream channel) and a frame listener
 * that answers each request's HEADERS at once, with {@link SquareHandler}'s answer. The handler flushes once
 * per read batch, as the HTTP/1.1 one does.
 */
final class Http2Answers extends Http2FrameAdapter {

    private final IntToLongFunction square;
    private Http2ConnectionEncoder encoder;

    private Http2Answers(IntToLongFunction square) {
        this.square = square;
    }

    /** One connection's handler, Netty's defaults but for the stream limit. */
    static Http2ConnectionHandler connection(IntToLongFunction square) {
        Http2Answers answers = new Http2Answers(square);
        Http2ConnectionHandler handler = new Http2ConnectionHandlerBuilder()
                .server(true)
                // The lab chooses the window; Netty's default limit of 100 streams (Tomcat's too) would refuse more.
                .initialSettings(Http2Settings.defaultSettings().maxConcurrentStreams(Integer.MAX_VALUE))
                .frameListener(answers)
                .build();
        answers.encoder = handler.encoder();
        return handler;
    }

    @Override
    public void onHeadersRead(
            ChannelHandlerContext ctx, int streamId, Http2Headers headers, int padding, boolean endOfStream) {
        SquareHandler.Answer answer = SquareHandler.answer(headers.method(), headers.path(), square);
        Http2Headers response = new DefaultHttp2Headers().status(answer.status().codeAsText());
        if (answer.body() == null) {
            response.setInt(HttpHeaderNames.CONTENT_LENGTH, 0);
            encoder.writeHeaders(ctx, streamId, response, 0, true, ctx.newPromise());
            return;
        }
        ByteBuf body = ByteBufUtil.writeAscii(ctx.alloc(), answer.body());
        response.set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_JSON)
                .setInt(HttpHeaderNames.CONTENT_LENGTH, body.readableBytes());
        encoder.writeHeaders(ctx, streamId, response, 0, false, ctx.newPromise());
        encoder.writeData(ctx, streamId, body, 0, true, ctx.newPromise());
    }

    @Override
    public void onHeadersRead(
            ChannelHandlerContext ctx,
            int streamId,
            Http2Headers headers,
            int streamDependency,
            short weight,
            boolean exclusive,
            int padding,
            boolean endOfStream) {
        onHeadersRead(ctx, streamId, headers, padding, endOfStream);
    }
}
