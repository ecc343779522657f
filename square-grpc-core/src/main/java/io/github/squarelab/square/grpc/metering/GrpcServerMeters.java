package io.github.squarelab.square.grpc.metering;

import io.grpc.MethodDescriptor;
import io.grpc.ServerServiceDefinition;
import io.grpc.ServerStreamTracer;
import io.micrometer.core.instrument.Clock;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The meters of every method the server binds, resolved once at start-up instead of looked up in the registry at every
 * call (docs/performance.md, "One metering layer"). If a meter leaves the registry, all are resolved again at the next
 * call, so that no call records into a meter nobody scrapes.
 */
public final class GrpcServerMeters {

    private final MeterRegistry registry;
    private final Clock clock;
    private final List<MethodDescriptor<?, ?>> bound;
    private final boolean observe;
    private final boolean longTaskTimers;
    /** Methods the server serves that no service definition named at start-up: at most the server's own methods. */
    private final ConcurrentHashMap<String, MethodMeters> late = new ConcurrentHashMap<>();

    private volatile Map<String, MethodMeters> methods;
    private volatile boolean stale;

    /**
     * @param observe false when Micrometer's gRPC observation runs beside this and records its meters itself
     * @param longTaskTimers false to leave grpc.server.active out, as management.observations.long-task-timer does
     */
    public GrpcServerMeters(
            MeterRegistry registry,
            Collection<ServerServiceDefinition> services,
            boolean observe,
            boolean longTaskTimers) {
        this.registry = registry;
        this.clock = registry.config().clock();
        this.bound = services.stream()
                .flatMap(service -> service.getServiceDescriptor().getMethods().stream())
                .<MethodDescriptor<?, ?>>map(method -> method)
                .toList();
        this.observe = observe;
        this.longTaskTimers = longTaskTimers;
        this.methods = resolve();
        registry.config().onMeterRemoved(removed -> stale = true);
    }

    /** The stream tracer half of the one metering layer, for the server builder beside {@link MeteringInterceptor}. */
    public ServerStreamTracer.Factory streamTracerFactory() {
        return new MeteredCall.Factory(this);
    }

    /** The registry's clock, in nanoseconds: what every duration here is measured with. */
    long now() {
        return clock.monotonicTime();
    }

    MethodMeters method(MethodDescriptor<?, ?> method) {
        String name = method.getFullMethodName();
        MethodMeters meters = known(name);
        return meters != null
                ? meters
                : late.computeIfAbsent(name, unknown -> new MethodMeters(registry, method, observe, longTaskTimers));
    }

    /**
     * The A66 meters of a stream's method as the client named it. A name the server does not serve is answered
     * UNIMPLEMENTED and metered as net.devh meters it, looked up at that call and not kept: a client can make up names.
     */
    A66Meters a66(String fullMethodName) {
        // No resolving here: the transport asks on its event loop, before the call exists. The interceptor's
        // method() resolves again after a meter was removed, and the calls after it get the new meters.
        MethodMeters meters = methods.get(fullMethodName);
        if (meters == null) {
            meters = late.get(fullMethodName);
        }
        return meters != null ? meters.a66 : new A66Meters(registry, fullMethodName);
    }

    private MethodMeters known(String fullMethodName) {
        if (stale) {
            resolveAgain();
        }
        return methods.get(fullMethodName);
    }

    private synchronized void resolveAgain() {
        if (stale) {
            stale = false;
            late.clear();
            methods = resolve();
        }
    }

    private Map<String, MethodMeters> resolve() {
        Map<String, MethodMeters> resolved = new HashMap<>();
        for (MethodDescriptor<?, ?> method : bound) {
            resolved.put(method.getFullMethodName(), new MethodMeters(registry, method, observe, longTaskTimers));
        }
        return Map.copyOf(resolved);
    }
}
