package io.github.squarelab.square.grpc;

import io.github.squarelab.proto.Input;
import io.github.squarelab.proto.Output;
import io.github.squarelab.proto.SquareRpcGrpc;
import io.github.squarelab.stream.SquaringStream;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;

/**
 * {@code vinsmath.SquareRpc}: one square per call, or one square per message on a bidi stream. A payload, when the
 * Input carries one, goes back in the Output as it came (the same immutable message, not a copy); an Input without
 * one, the article's call, gets exactly the Output it always got.
 *
 * <p>Each Spring generation serves it as its gRPC starter finds services: net.devh's by its annotation, Spring gRPC's as
 * any BindableService bean (each service's GrpcServerWiring).
 */
public class SquareRpcService extends SquareRpcGrpc.SquareRpcImplBase {

    /**
     * How far a client may send ahead of what the service has read (each stream's and the connection's HTTP/2 window):
     * what it lets in waits in direct buffers (docs/performance.md, "The gRPC service's flow-control window"). Fixed, no
     * probe: a WAN round trip's worth of bytes, and direct memory bounded for 100 streams.
     */
    public static final int FLOW_CONTROL_WINDOW_BYTES = 256 * 1024;

    @Override
    public void findSquareUnary(Input request, StreamObserver<Output> responseObserver) {
        responseObserver.onNext(square(request));
        responseObserver.onCompleted();
    }

    @Override
    public StreamObserver<Input> findSquareBiStream(StreamObserver<Output> responseObserver) {
        return new SquaringStream((ServerCallStreamObserver<Output>) responseObserver, SquareRpcService::square);
    }

    static Output square(Input input) {
        int number = input.getNumber();
        // Widen before multiplying: squares above 2^31 must stay correct.
        Output.Builder output = Output.newBuilder().setNumber(number).setResult((long) number * number);
        if (input.hasPayload()) {
            output.setPayload(input.getPayload());
        }
        return output.build();
    }
}
