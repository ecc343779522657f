package io.github.squarelab.floor.http;

import io.github.squarelab.floor.Squares;
import io.github.squarelab.floor.measure.MeasuredInterval;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.timeout.ReadTimeoutException;
import java.nio.charset.StandardCharsets;

/**
 * One keep-alive connection asking for squares one at a time (HTTP/1.1 does not multiplex, and the
 * aggregator's pool does not pipeline). Its callbacks all run on its event loop, so no lock.
 */
final class SquareExchange extends SimpleChannelInboundHandler<FullHttpResponse> {

    private final String host;
    private final MeasuredInterval interval;
    private final HttpLoad load;
    private int number;
    private long sentNanos;
    private boolean awaitingAnswer;

    /**
     * @param host the Host header, the server's host:port
     * @param first the first number to ask for
     */
    SquareExchange(String host, int first, MeasuredInterval interval, HttpLoad load) {
        this.host = host;
        this.number = first;
        this.interval = interval;
        this.load = load;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        send(ctx);
        ctx.fireChannelActive();
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, FullHttpResponse response) {
        long latency = System.nanoTime() - sentNanos;
        awaitingAnswer = false;
        String wrong = check(response);
        if (wrong != null) {
            interval.fail(wrong);
            ctx.close();
            return;
        }
        interval.answered(latency);
        number = Squares.next(number);
        if (load.isStopping() || interval.hasFailed()) {
            ctx.close();
        } else {
            send(ctx);
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        if (load.hasGivenUp()) {
            interval.unanswered(awaitingAnswer ? 1 : 0);
        } else if (awaitingAnswer) {
            interval.fail("rest_unary: the server closed a connection without answering " + number);
        }
        load.exchangeEnded();
        ctx.fireChannelInactive();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (!load.hasGivenUp()) {
            interval.fail(
                    cause instanceof ReadTimeoutException
                            ? "rest_unary: no answer for " + number + " within the deadline"
                            : "rest_unary: " + HttpTls.inWords(cause));
        }
        ctx.close();
    }

    private void send(ChannelHandlerContext ctx) {
        FullHttpRequest request = new DefaultFullHttpRequest(
                HttpVersion.HTTP_1_1, HttpMethod.GET, SquareHandler.PATH + number, Unpooled.EMPTY_BUFFER);
        request.headers()
                .set(HttpHeaderNames.HOST, host)
                .set(HttpHeaderNames.ACCEPT, HttpHeaderValues.APPLICATION_JSON);
        awaitingAnswer = true;
        sentNanos = System.nanoTime();
        ctx.writeAndFlush(request).addListener(ChannelFutureListener.FIRE_EXCEPTION_ON_FAILURE);
    }

    /** What is wrong with the answer, or null when it is the square of the number asked for. */
    private String check(FullHttpResponse response) {
        String wrong = wrongAnswer(
                "rest_unary",
                number,
                response.status(),
                response.headers().get(HttpHeaderNames.CONTENT_TYPE),
                response.content().toString(StandardCharsets.UTF_8));
        if (wrong == null && !HttpUtil.isKeepAlive(response)) {
            return "rest_unary did not keep the connection alive after answering " + number;
        }
        return wrong;
    }

    /** What is wrong with an answer over HTTP/1.1 or HTTP/2, or null when it is 200 with the square as JSON. */
    static String wrongAnswer(String transport, int number, HttpResponseStatus status, CharSequence type, String body) {
        if (!HttpResponseStatus.OK.equals(status)) {
            return transport + " answered " + status + " for " + number;
        }
        if (type == null || !type.toString().startsWith(HttpHeaderValues.APPLICATION_JSON.toString())) {
            return transport + " answered Content-Type " + type + " for " + number;
        }
        long square = Squares.square(number);
        if (body == null || !isNumber(body.strip(), square)) {
            return transport + " answered '" + abbreviate(String.valueOf(body)) + "' for " + number + " (" + square
                    + ")";
        }
        return null;
    }

    private static boolean isNumber(String text, long expected) {
        try {
            return Long.parseLong(text) == expected;
        } catch (NumberFormatException e) {
            return false;
        }
    }

    private static String abbreviate(String text) {
        return text.length() <= 40 ? text : text.substring(0, 40) + "...";
    }
}
