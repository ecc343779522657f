package io.github.squarelab.stream;

import io.github.squarelab.proto.Input;
import io.github.squarelab.proto.Output;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.util.function.Function;

/**
 * One bidi stream, answering each {@link Input} in order and requesting the next only while the client reads our
 * answers (as grpc-java's ManualFlowControlServer), so that nothing piles up on either side.
 */
public final class SquaringStream implements StreamObserver<Input> {

    private final ServerCallStreamObserver<Output> answers;
    private final Function<Input, Output> answer;
    /** True while a message is requested and not yet received, so that onReady does not request twice. */
    private boolean awaitingMessage;

    public SquaringStream(ServerCallStreamObserver<Output> answers, Function<Input, Output> answer) {
        this.answers = answers;
        this.answer = answer;
        answers.disableAutoRequest();
        answers.setOnReadyHandler(this::requestIfReady);
        // A cancelled call (client gone, deadline passed) just ends; there is nobody left to answer.
        answers.setOnCancelHandler(() -> {});
    }

    @Override
    public void onNext(Input input) {
        awaitingMessage = false;
        answers.onNext(answer.apply(input));
        requestIfReady();
    }

    @Override
    public void onError(Throwable t) {
        // The client cancelled or the transport broke: the call is already over, nothing to send.
    }

    @Override
    public void onCompleted() {
        answers.onCompleted();
    }

    private void requestIfReady() {
        if (!awaitingMessage && answers.isReady() && !answers.isCancelled()) {
            awaitingMessage = true;
            answers.request(1);
        }
    }
}
