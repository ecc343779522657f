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
 * → an empty {@code 404}. Netty's HttpHelloWorldServer's shape: one flush per read batch. HTTP/2
 * connections are answered the same by {@link Http2Answers}.
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
            ctx.writeAndFlush(response(new Answer(HttpResponseStatus.BAD_REQUEST, null)))
                    .addListener(ChannelFutureListener.CLOSE);
            return;
        }
        ctx.write(response(answer(request.method().asciiName(), request.uri(), square)));
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        ctx.flush();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        ctx.close();
    }

    /**
     * What a request is answered, over HTTP/1.1 or HTTP/2 alike.
     *
     * @param body the square as text for a {@code 200}, else null: an empty body
     */
    record Answer(HttpResponseStatus status, String body) {}

    /** Routed as the REST square service routes; a missing method or path is a 404. */
    static Answer answer(CharSequence method, CharSequence uri, IntToLongFunction square) {
        String path = uri == null ? "" : new QueryStringDecoder(uri.toString()).path();
        if (method == null
                || !HttpMethod.GET.asciiName().contentEquals(method)
                || !path.startsWith(PATH)
                || path.indexOf('/', PATH.length()) >= 0) {
            return new Answer(HttpResponseStatus.NOT_FOUND, null);
        }
        int number;
        try {
            number = Integer.parseInt(path.substring(PATH.length()));
        } catch (NumberFormatException e) {
            return new Answer(HttpResponseStatus.BAD_REQUEST, null);
        }
        return new Answer(HttpResponseStatus.OK, Long.toString(square.applyAsLong(number)));
    }

    /** A JSON body for a square, else empty; its Content-Length keeps the connection alive. */
    private static FullHttpResponse response(Answer answer) {
        if (answer.body() == null) {
            FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, answer.status());
            response.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, 0);
            return response;
        }
        FullHttpResponse response = new DefaultFullHttpResponse(
                HttpVersion.HTTP_1_1, answer.status(), Unpooled.copiedBuffer(answer.body(), StandardCharsets.US_ASCII));
        response.headers()
                .set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_JSON)
                .setInt(HttpHeaderNames.CONTENT_LENGTH, response.content().readableBytes());
        return response;
    }
}
