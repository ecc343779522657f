package io.github.squarelab.aggregator.grpc;

import io.github.squarelab.payload.ProtoPayloads;
import io.github.squarelab.payload.Shape;
import io.github.squarelab.proto.Input;
import io.github.squarelab.proto.Output;

/** What the three gRPC clients send for a number, and how they check its echo. */
final class GrpcPayloads {

    private GrpcPayloads() {}

    /** The Input for {@code number}: the article's, with the payload of {@code shape} when it has one. */
    static Input input(int number, Shape shape) {
        Input.Builder input = Input.newBuilder().setNumber(number);
        if (shape.hasPayload()) {
            input.setPayload(ProtoPayloads.of(shape, number));
        }
        return input.build();
    }

    /**
     * Null when the answer to {@code number} echoes the payload it was sent (always, for {@link Shape#SMALL}, whose
     * answers are not looked at beyond the article's fields); else what is wrong with the echo, for a bad answer.
     * Checked in place against the shape's values for the number: nothing is kept of what was sent.
     */
    static String wrongEcho(int number, Shape shape, Output output) {
        if (!shape.hasPayload()) {
            return null;
        }
        if (!output.hasPayload()) {
            return "number " + number + " without the " + shape + " payload it was sent";
        }
        String difference = ProtoPayloads.difference(shape, number, output.getPayload());
        return difference == null
                ? null
                : "number " + number + " with a payload that differs from the one sent: " + difference;
    }
}
