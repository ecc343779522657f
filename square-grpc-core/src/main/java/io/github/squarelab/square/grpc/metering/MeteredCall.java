package io.github.squarelab.square.grpc.metering;

import io.grpc.Context;
import io.grpc.Metadata;
import io.grpc.ServerStreamTracer;
import io.grpc.Status;
import io.micrometer.core.instrument.LongTaskTimer;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.concurrent.atomic.AtomicLongFieldUpdater;

/**
 * Everything one call records, in one object: created by the transport as the stream's tracer (which sees wire sizes
 * and the stream's end), put in the call's gRPC {@link Context}, where {@link MeteringInterceptor} finds it for what
 * only the call sees (messages, the status the service closes with, a client's cancel).
 */
final class MeteredCall extends ServerStreamTracer {

    static final Context.Key<MeteredCall> CURRENT = Context.key("square-lab.metered-call");

    private static final AtomicLongFieldUpdater<MeteredCall> BYTES_SENT =
            AtomicLongFieldUpdater.newUpdater(MeteredCall.class, "bytesSent");
    private static final AtomicLongFieldUpdater<MeteredCall> BYTES_RECEIVED =
            AtomicLongFieldUpdater.newUpdater(MeteredCall.class, "bytesReceived");
    private static final AtomicIntegerFieldUpdater<MeteredCall> STREAM_CLOSED =
            AtomicIntegerFieldUpdater.newUpdater(MeteredCall.class, "streamClosed");

    private final GrpcServerMeters meters;
    /** Null when the call was not traced (a server built without {@link Factory}): no A66 metrics then. */
    private final A66Meters a66;

    private final long streamStart;
    private volatile long bytesSent;
    private volatile long bytesReceived;
    private volatile int streamClosed;

    // Set when the interceptor starts the call, before grpc-java hands the call to any other thread.
    private MethodMeters method;
    private long callStart;
    private LongTaskTimer.Sample active;

    private volatile Status.Code closedWith;
    private volatile Throwable error;

    MeteredCall(GrpcServerMeters meters, A66Meters a66) {
        this.meters = meters;
        this.a66 = a66;
        this.streamStart = meters.now();
    }

    /** Makes one {@link MeteredCall} per stream the server accepts. */
    static final class Factory extends ServerStreamTracer.Factory {

        private final GrpcServerMeters meters;

        Factory(GrpcServerMeters meters) {
            this.meters = meters;
        }

        @Override
        public ServerStreamTracer newServerStreamTracer(String fullMethodName, Metadata headers) {
            return new MeteredCall(meters, meters.a66(fullMethodName));
        }
    }

    // The transport's side.

    @Override
    public Context filterContext(Context context) {
        return context.withValue(CURRENT, this);
    }

    @Override
    public void serverCallStarted(ServerCallInfo<?, ?> callInfo) {
        a66.started();
    }

    @Override
    public void outboundWireSize(long bytes) {
        BYTES_SENT.getAndAdd(this, bytes);
    }

    @Override
    public void inboundWireSize(long bytes) {
        BYTES_RECEIVED.getAndAdd(this, bytes);
    }

    @Override
    public void streamClosed(Status status) {
        if (STREAM_CLOSED.getAndSet(this, 1) == 0) {
            a66.ended(status.getCode(), meters.now() - streamStart, bytesSent, bytesReceived);
        }
    }

    // The call's side, from the interceptor.

    void callStarted(MethodMeters method) {
        this.method = method;
        this.callStart = meters.now();
        this.active = method.observed != null ? method.observed.started() : null;
    }

    void messageReceived() {
        method.collecting.received();
        if (method.observed != null) {
            method.observed.received();
        }
    }

    void messageSent() {
        method.collecting.sent();
        if (method.observed != null) {
            method.observed.sent();
        }
    }

    /** The service closes the call: its status, and the error it closed with, if any. */
    void closing(Status status) {
        closedWith = status.getCode();
        if (status.getCause() != null) {
            error = status.getCause();
        }
    }

    /** The service threw from a listener callback. */
    void failed(Throwable thrown) {
        error = thrown;
    }

    /**
     * The call is over and its status sent, before the service hears of it: MetricCollecting timed the processing
     * then.
     */
    void completing() {
        Status.Code code = closedWith;
        method.collecting.ended(code != null ? code : Status.Code.UNKNOWN, meters.now() - callStart);
    }

    /** After the service heard the call is over: the observation stopped then. */
    void completed() {
        if (method.observed != null) {
            method.observed.ended(closedWith, error, meters.now() - callStart, active);
        }
    }

    /** The client cancelled, or the deadline passed, or the connection broke; before the service hears of it. */
    void cancelling() {
        method.collecting.ended(Status.Code.CANCELLED, meters.now() - callStart);
        if (method.observed != null) {
            method.observed.cancelled();
        }
    }

    /** After the service heard of the cancel. */
    void cancelled() {
        completed();
    }

    /** The service threw while the call started: no listener, so nothing else will end it. */
    void failedToStart(Throwable thrown) {
        if (method.observed != null) {
            method.observed.ended(closedWith, thrown, meters.now() - callStart, active);
        }
    }
}
