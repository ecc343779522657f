package io.github.squarelab.floor.http;

import io.github.squarelab.floor.Json;
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
 * {@code GET /rest/square/unary/{number}} → {@code 200}, {@code application/json}, the bare number
 * {@code number * number}; a number that is not a 32-bit integer → {@code 400}, another path → {@code 404},
 * another method → {@code 405}, errors as small RFC 9457 problems, as the contract says of the REST square
 * service.
 *
 * <p>The shape of Netty's HttpHelloWorldServer: answers are written as requests are read and flushed once
 * per read batch ({@link #channelReadComplete}); keep-alive is left to {@code HttpServerKeepAliveHandler}.
 * Stateless, so one instance serves every connection.
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
        if (message instanceof HttpRequest request) {
            answer(ctx, request);
        }
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        ctx.flush();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        ctx.close();
    }

    private void answer(ChannelHandlerContext ctx, HttpRequest request) {
        if (request.decoderResult().isFailure()) {
            ctx.writeAndFlush(problem(HttpResponseStatus.BAD_REQUEST, "the request could not be parsed"))
                .addListener(ChannelFutureListener.CLOSE);
            return;
        }
        String path = new QueryStringDecoder(request.uri()).path();
        if (!path.startsWith(PATH) || path.indexOf('/', PATH.length()) >= 0) {
            ctx.write(problem(HttpResponseStatus.NOT_FOUND, "no resource at " + path));
        } else if (!HttpMethod.GET.equals(request.method())) {
            FullHttpResponse response = problem(HttpResponseStatus.METHOD_NOT_ALLOWED, "only GET is supported");
            response.headers().set(HttpHeaderNames.ALLOW, HttpMethod.GET.name());
            ctx.write(response);
        } else {
            ctx.write(square(path.substring(PATH.length())));
        }
    }

    private FullHttpResponse square(String number) {
        int value;
        try {
            value = Integer.parseInt(number);
        } catch (NumberFormatException e) {
            return problem(HttpResponseStatus.BAD_REQUEST, "'" + number + "' is not a 32-bit signed integer");
        }
        return response(HttpResponseStatus.OK, HttpHeaderValues.APPLICATION_JSON.toString(),
            Long.toString(square.applyAsLong(value)));
    }

    private static FullHttpResponse problem(HttpResponseStatus status, String detail) {
        Json body = new Json().field("type", "about:blank").field("title", status.reasonPhrase())
            .field("status", status.code()).field("detail", detail);
        return response(status, "application/problem+json", body.toString());
    }

    private static FullHttpResponse response(HttpResponseStatus status, String contentType, String body) {
        FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status,
            Unpooled.copiedBuffer(body, StandardCharsets.UTF_8));
        response.headers()
            .set(HttpHeaderNames.CONTENT_TYPE, contentType)
            .setInt(HttpHeaderNames.CONTENT_LENGTH, response.content().readableBytes());
        return response;
    }
}
