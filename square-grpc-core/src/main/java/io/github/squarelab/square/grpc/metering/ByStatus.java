package io.github.squarelab.square.grpc.metering;

import io.grpc.Status;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.Function;

/**
 * One meter per gRPC status code, registered the first time a call ends with that code and then read from an array:
 * no registry lookup, no tag list built, per call. Two calls racing to register the same code get the same meter back
 * from the registry, so either may win.
 */
final class ByStatus<M> {

    private static final Status.Code[] CODES = Status.Code.values();

    private final AtomicReferenceArray<M> meters = new AtomicReferenceArray<>(CODES.length);
    private final Function<Status.Code, M> register;

    ByStatus(Function<Status.Code, M> register) {
        this.register = register;
    }

    M get(Status.Code code) {
        int index = code.ordinal();
        M meter = meters.get(index);
        if (meter == null) {
            meter = register.apply(code);
            meters.set(index, meter);
        }
        return meter;
    }
}
