package io.github.squarelab.square.grpc.metering;

import io.grpc.ForwardingServerCall.SimpleForwardingServerCall;
import io.grpc.ForwardingServerCallListener.SimpleForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;

/**
 * The call's half of the one metering layer: counts each message each way, and ends the call's meters when it
 * completes or is cancelled, through the {@link MeteredCall} its stream's tracer put in the context.
 */
public final class MeteringInterceptor implements ServerInterceptor {

    private final GrpcServerMeters meters;

    public MeteringInterceptor(GrpcServerMeters meters) {
        this.meters = meters;
    }

    @Override
    public <Q, A> ServerCall.Listener<Q> interceptCall(
            ServerCall<Q, A> call, Metadata headers, ServerCallHandler<Q, A> next) {
        MeteredCall metered = MeteredCall.CURRENT.get();
        if (metered == null) {
            metered = new MeteredCall(meters, null);
        }
        metered.callStarted(meters.method(call.getMethodDescriptor()));
        ServerCall.Listener<Q> listener;
        try {
            listener = next.startCall(new MeteredServerCall<>(call, metered), headers);
        } catch (Throwable thrown) {
            // Any throwable, an Error too: the call's active sample must stop, and the error tag says what ended it.
            metered.failedToStart(thrown);
            throw thrown;
        }
        return new MeteredListener<>(listener, metered);
    }

    private static final class MeteredServerCall<Q, A> extends SimpleForwardingServerCall<Q, A> {

        private final MeteredCall metered;

        MeteredServerCall(ServerCall<Q, A> call, MeteredCall metered) {
            super(call);
            this.metered = metered;
        }

        @Override
        public void sendMessage(A message) {
            metered.messageSent();
            super.sendMessage(message);
        }

        @Override
        public void close(Status status, Metadata trailers) {
            metered.closing(status);
            super.close(status, trailers);
        }
    }

    private static final class MeteredListener<Q> extends SimpleForwardingServerCallListener<Q> {

        private final MeteredCall metered;

        MeteredListener(ServerCall.Listener<Q> listener, MeteredCall metered) {
            super(listener);
            this.metered = metered;
        }

        @Override
        public void onMessage(Q message) {
            metered.messageReceived();
            super.onMessage(message);
        }

        @Override
        public void onComplete() {
            metered.completing();
            try {
                super.onComplete();
            } catch (Throwable thrown) {
                metered.failed(thrown);
                throw thrown;
            } finally {
                metered.completed();
            }
        }

        @Override
        public void onCancel() {
            metered.cancelling();
            try {
                super.onCancel();
            } catch (Throwable thrown) {
                metered.failed(thrown);
                throw thrown;
            } finally {
                metered.cancelled();
            }
        }
    }
}
