package io.github.squarelab.square.grpc.metering;

import io.grpc.MethodDescriptor;
import io.micrometer.core.instrument.MeterRegistry;

/** Every meter of one method the server binds, in the three families the service has always exposed. */
final class MethodMeters {

    final A66Meters a66;
    final CollectingMeters collecting;
    /** Null when Micrometer's own gRPC observation runs (for tracing) and records these meters itself. */
    final ObservedMeters observed;

    MethodMeters(MeterRegistry registry, MethodDescriptor<?, ?> method, boolean observe, boolean longTaskTimers) {
        this.a66 = new A66Meters(registry, method.getFullMethodName());
        this.collecting = new CollectingMeters(registry, method);
        this.observed = observe ? new ObservedMeters(registry, method, longTaskTimers) : null;
    }
}
