package io.github.squarelab.floor.grpc;

import io.github.squarelab.proto.Input;
import io.github.squarelab.proto.Output;
import io.github.squarelab.proto.SquareRpcGrpc;
import io.github.squarelab.stream.SquaringStream;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.util.function.IntToLongFunction;

/** {@code vinsmath.SquareRpc}: one square per call, or one square per message on a bidi stream. */
final class SquareService extends SquareRpcGrpc.SquareRpcImplBase {

    private final IntToLongFunction square;

    /** @param square what to answer for a number: its square, or something else in tests */
    SquareService(IntToLongFunction square) {
        this.square = square;
    }

    @Override
    public void findSquareUnary(Input request, StreamObserver<Output> responseObserver) {
        responseObserver.onNext(answer(request));
        responseObserver.onCompleted();
    }

    @Override
    public StreamObserver<Input> findSquareBiStream(StreamObserver<Output> responseObserver) {
        return new SquaringStream((ServerCallStreamObserver<Output>) responseObserver, this::answer);
    }

    private Output answer(Input input) {
        int number = input.getNumber();
        return Output.newBuilder()
                .setNumber(number)
                .setResult(square.applyAsLong(number))
                .build();
    }
}
