package io.github.squarelab.floor.http;

import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandler.Sharable;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.QueryStringDecoder;
import java.nio.charset.StandardCharsets;
import java.util.function.IntToLongFunction;

/**
 * {@code GET /rest/square/unary/{number}} → {@code 200}, {@code application/json}, the bare square, as the
 * REST square service answers; a number that is not a 32-bit integer → an empty {@code 400}, anything else
 * → an empty {@code 404}. Netty's HttpHelloWorldServer's shape: one flush per read batch.
 */
@Sharable
final class SquareHandler extends SimpleChannelInboundHandler<HttpObject> {

    static final String PATH = "/rest/square/unary/";

    private final IntToLongFunction square;

    /** @param square what to answer for a number: its square, or something else in tests */
    SquareHandler(IntToLongFunction square) {
        this.square = square;
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, HttpObject message) {
        // The request line and headers are all we need; the (empty) body that follows is dropped.
        if (!(message instanceof HttpRequest request)) {
            return;
        }
        if (request.decoderResult().isFailure()) {
            ctx.writeAndFlush(response(HttpResponseStatus.BAD_REQUEST)).addListener(ChannelFutureListener.CLOSE);
            return;
        }
        ctx.write(answer(request));
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        ctx.flush();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        ctx.close();
    }

    private FullHttpResponse answer(HttpRequest request) {
        String path = new QueryStringDecoder(request.uri()).path();
        if (!HttpMethod.GET.equals(request.method())
                || !path.startsWith(PATH)
                || path.indexOf('/', PATH.length()) >= 0) {
            return response(HttpResponseStatus.NOT_FOUND);
        }
        int number;
        try {
            number = Integer.parseInt(path.substring(PATH.length()));
        } catch (NumberFormatException e) {
            return response(HttpResponseStatus.BAD_REQUEST);
        }
        FullHttpResponse response = new DefaultFullHttpResponse(
                HttpVersion.HTTP_1_1,
                HttpResponseStatus.OK,
                Unpooled.copiedBuffer(Long.toString(square.applyAsLong(number)), StandardCharsets.US_ASCII));
        response.headers()
                .set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_JSON)
                .setInt(HttpHeaderNames.CONTENT_LENGTH, response.content().readableBytes());
        return response;
    }

    /** An empty response; its Content-Length keeps the connection alive. */
    private static FullHttpResponse response(HttpResponseStatus status) {
        FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status);
        response.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, 0);
        return response;
    }
}
