package io.github.squarelab.square.grpc.metering;

import java.util.function.Supplier;

/**
 * A meter registered when first used, then kept: as net.devh and Micrometer's observation register theirs, so that a
 * method's series appear once it is called, and a method never called (the health service's Watch, say) has none.
 * Two threads racing to register get the same meter back from the registry.
 */
final class LazyMeter<M> {

    private final Supplier<M> register;
    private volatile M meter;

    LazyMeter(Supplier<M> register) {
        this.register = register;
    }

    M get() {
        M known = meter;
        if (known == null) {
            known = register.get();
            meter = known;
        }
        return known;
    }
}
