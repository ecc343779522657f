package io.github.squarelab.square.grpc.metering;

import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.BaseUnits;
import java.util.concurrent.TimeUnit;

/**
 * The metrics of one method as Micrometer's MetricCollectingServerInterceptor names, describes and tags them, which
 * net.devh installs and the monitoring rules read: messages each way, and the processing time by status code. Created
 * for every method the server binds, with the OK timer, before any call, so that a method never called still shows.
 */
final class CollectingMeters {

    private final Counter requestsReceived;
    private final Counter responsesSent;
    private final ByStatus<Timer> processing;

    CollectingMeters(MeterRegistry registry, MethodDescriptor<?, ?> method) {
        Tags tags = Tags.of(
                "service", method.getServiceName(),
                "method", method.getBareMethodName(),
                "methodType", method.getType().name());
        requestsReceived = messages("grpc.server.requests.received", "The total number of requests received", tags)
                .register(registry);
        responsesSent = messages("grpc.server.responses.sent", "The total number of responses sent", tags)
                .register(registry);
        processing = new ByStatus<>(code -> Timer.builder("grpc.server.processing.duration")
                .description("The total time taken for the server to complete the call")
                .tags(tags)
                .tag("statusCode", code.name())
                .register(registry));
        processing.get(Status.Code.OK);
    }

    private static Counter.Builder messages(String name, String description, Tags tags) {
        return Counter.builder(name)
                .description(description)
                .baseUnit(BaseUnits.MESSAGES)
                .tags(tags);
    }

    void received() {
        requestsReceived.increment();
    }

    void sent() {
        responsesSent.increment();
    }

    void ended(Status.Code code, long nanos) {
        processing.get(code).record(nanos, TimeUnit.NANOSECONDS);
    }
}
