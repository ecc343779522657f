package io.github.squarelab.floor.http;

import io.github.squarelab.floor.Squares;
import io.github.squarelab.floor.measure.MeasuredInterval;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http2.DefaultHttp2Connection;
import io.netty.handler.codec.http2.DefaultHttp2ConnectionDecoder;
import io.netty.handler.codec.http2.DefaultHttp2ConnectionEncoder;
import io.netty.handler.codec.http2.DefaultHttp2FrameReader;
import io.netty.handler.codec.http2.DefaultHttp2FrameWriter;
import io.netty.handler.codec.http2.DefaultHttp2Headers;
import io.netty.handler.codec.http2.Http2Connection;
import io.netty.handler.codec.http2.Http2ConnectionDecoder;
import io.netty.handler.codec.http2.Http2ConnectionEncoder;
import io.netty.handler.codec.http2.Http2ConnectionHandler;
import io.netty.handler.codec.http2.Http2Error;
import io.netty.handler.codec.http2.Http2FrameAdapter;
import io.netty.handler.codec.http2.Http2Headers;
import io.netty.handler.codec.http2.Http2Settings;
import io.netty.handler.timeout.ReadTimeoutException;
import io.netty.util.AsciiString;
import io.netty.util.collection.IntObjectHashMap;
import io.netty.util.collection.IntObjectMap;
import java.nio.charset.StandardCharsets;

/**
 * One HTTP/2 connection (with prior knowledge, or agreed by ALPN under TLS) keeping {@code streams} calls in flight,
 * one stream per call, as
 * an HTTP/2 pool multiplexes them; each checked answer opens the next stream at once. Netty's
 * Http2ConnectionHandler, the layer grpc-netty builds on, with no channel per stream. Its callbacks all run
 * on its event loop, so no lock.
 */
final class SquareStreams extends Http2ConnectionHandler {

    private static final AsciiString HTTP = AsciiString.cached("http");
    private static final AsciiString HTTPS = AsciiString.cached("https");

    /** {@code :scheme}: https over TLS, as HTTP/2 requires there. */
    private final AsciiString scheme;

    private final AsciiString authority;
    private final int streams;
    private final MeasuredInterval interval;
    private final HttpLoad load;
    private final IntObjectMap<Call> calls = new IntObjectHashMap<>();
    /** One listener for every request rather than one each. */
    private final ChannelFutureListener ifNotSent = this::failIfNotSent;

    private int number;
    private boolean started;

    private SquareStreams(
            Http2ConnectionDecoder decoder,
            Http2ConnectionEncoder encoder,
            String authority,
            int first,
            int streams,
            MeasuredInterval interval,
            HttpLoad load,
            boolean overTls) {
        super(decoder, encoder, new Http2Settings());
        this.scheme = overTls ? HTTPS : HTTP;
        decoder.frameListener(new Answers());
        // Giving up closes connections with calls in flight: at once, not after the 30 s graceful default.
        gracefulShutdownTimeoutMillis(0);
        this.authority = new AsciiString(authority);
        this.number = first;
        this.streams = streams;
        this.interval = interval;
        this.load = load;
    }

    /**
     * @param authority the server's host:port
     * @param first the first number to ask for
     * @param streams how many calls to keep in flight
     * @param overTls whether the connection is TLS (its requests then say {@code :scheme https})
     */
    static SquareStreams connection(
            String authority, int first, int streams, MeasuredInterval interval, HttpLoad load, boolean overTls) {
        Http2Connection connection = new DefaultHttp2Connection(false);
        Http2ConnectionEncoder encoder = new DefaultHttp2ConnectionEncoder(connection, new DefaultHttp2FrameWriter());
        Http2ConnectionDecoder decoder =
                new DefaultHttp2ConnectionDecoder(connection, encoder, new DefaultHttp2FrameReader());
        return new SquareStreams(decoder, encoder, authority, first, streams, interval, load, overTls);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        if (load.hasGivenUp()) {
            interval.unanswered(calls.size());
        } else if (!calls.isEmpty()) {
            interval.fail("rest_h2c: the server closed a connection with " + calls.size() + " calls unanswered");
        }
        load.exchangeEnded();
        super.channelInactive(ctx);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        fail(
                cause instanceof ReadTimeoutException
                        ? "rest_h2c: no answer within the deadline on a connection with " + calls.size()
                                + " calls in flight"
                        : "rest_h2c: " + HttpTls.inWords(cause));
        ctx.close();
    }

    /** HTTP/2 errors the codec finds itself (a malformed frame, a request it cannot send) come here. */
    @Override
    public void onError(ChannelHandlerContext ctx, boolean outbound, Throwable cause) {
        fail("rest_h2c: " + cause);
        super.onError(ctx, outbound, cause);
    }

    private void send(ChannelHandlerContext ctx) {
        int streamId = connection().local().incrementAndGetNextStreamId();
        Http2Headers request = new DefaultHttp2Headers()
                .method(HttpMethod.GET.asciiName())
                .scheme(scheme)
                .authority(authority)
                .path(SquareHandler.PATH + number)
                .add(HttpHeaderNames.ACCEPT, HttpHeaderValues.APPLICATION_JSON);
        calls.put(streamId, new Call(number, System.nanoTime()));
        number = Squares.next(number);
        encoder()
                .writeHeaders(ctx, streamId, request, 0, true, ctx.newPromise())
                .addListener(ifNotSent);
    }

    private void failIfNotSent(ChannelFuture sent) {
        if (!sent.isSuccess()) {
            fail("rest_h2c: a request could not be sent: " + sent.cause());
            sent.channel().close();
        }
    }

    /** A whole answer has come: checked, reported, and followed by the next call unless the run is ending. */
    private void answered(ChannelHandlerContext ctx, int streamId, Call call) {
        long latency = System.nanoTime() - call.sentNanos;
        calls.remove(streamId);
        String wrong = SquareExchange.wrongAnswer(
                "rest_h2c",
                call.number,
                call.status == null ? null : HttpResponseStatus.parseLine(call.status),
                call.contentType,
                call.body);
        if (wrong != null) {
            interval.fail(wrong);
            ctx.close();
            return;
        }
        interval.answered(latency);
        if (!load.isStopping() && !interval.hasFailed()) {
            send(ctx);
        } else if (calls.isEmpty()) {
            // Through this handler's close, so the server gets a GOAWAY.
            ctx.channel().close();
        }
    }

    /** After giving up, the connection's end says why; a failure already reported stays the first. */
    private void fail(String what) {
        if (!load.hasGivenUp()) {
            interval.fail(what);
        }
    }

    /** One call, from its request to the end of its answer's stream. */
    private static final class Call {

        final int number;
        final long sentNanos;
        CharSequence status;
        CharSequence contentType;
        String body;

        Call(int number, long sentNanos) {
            this.number = number;
            this.sentNanos = sentNanos;
        }
    }

    /** Reads the answers: HEADERS, then DATA (or HEADERS alone for an empty body), the last ending the stream. */
    private final class Answers extends Http2FrameAdapter {

        /** The calls start on the server's first SETTINGS, as grpc-java's do, so its stream limit is known. */
        @Override
        public void onSettingsRead(ChannelHandlerContext ctx, Http2Settings settings) {
            if (started) {
                return;
            }
            started = true;
            Long limit = settings.maxConcurrentStreams();
            if (limit != null && limit < streams) {
                fail("rest_h2c: the server allows " + limit + " concurrent streams on a connection, the window puts "
                        + streams + " on each; give it more connections");
                ctx.close();
                return;
            }
            // Flushed with the rest of this read, by the handler.
            for (int call = 0; call < streams; call++) {
                send(ctx);
            }
        }

        @Override
        public void onHeadersRead(
                ChannelHandlerContext ctx, int streamId, Http2Headers headers, int padding, boolean endOfStream) {
            Call call = calls.get(streamId);
            if (call == null) {
                return;
            }
            // Trailers, if any, come after the status and say nothing the check reads.
            if (call.status == null) {
                call.status = headers.status();
                call.contentType = headers.get(HttpHeaderNames.CONTENT_TYPE);
            }
            if (endOfStream) {
                answered(ctx, streamId, call);
            }
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

        @Override
        public int onDataRead(ChannelHandlerContext ctx, int streamId, ByteBuf data, int padding, boolean endOfStream) {
            Call call = calls.get(streamId);
            if (call != null) {
                String text = data.toString(StandardCharsets.UTF_8);
                call.body = call.body == null ? text : call.body + text;
                if (endOfStream) {
                    answered(ctx, streamId, call);
                }
            }
            return data.readableBytes() + padding;
        }

        @Override
        public void onRstStreamRead(ChannelHandlerContext ctx, int streamId, long errorCode) {
            Call call = calls.remove(streamId);
            if (call != null) {
                fail("rest_h2c: the server reset the stream asking for " + call.number + ": "
                        + Http2Error.valueOf(errorCode));
                ctx.close();
            }
        }

        /** The server takes no more streams: the window cannot be kept, so the run fails unless it is ending. */
        @Override
        public void onGoAwayRead(ChannelHandlerContext ctx, int lastStreamId, long errorCode, ByteBuf debugData) {
            if (!load.isStopping()) {
                fail("rest_h2c: the server sent GOAWAY (" + Http2Error.valueOf(errorCode) + ")");
                ctx.close();
            }
        }
    }
}
