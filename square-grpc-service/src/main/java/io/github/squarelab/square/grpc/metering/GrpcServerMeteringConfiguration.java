package io.github.squarelab.square.grpc.metering;

import io.grpc.BindableService;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.List;
import net.devh.boot.grpc.common.util.InterceptorOrder;
import net.devh.boot.grpc.server.interceptor.GrpcGlobalServerInterceptor;
import net.devh.boot.grpc.server.serverfactory.GrpcServerConfigurer;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.observation.ObservationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.annotation.Order;

/**
 * One metering layer for every gRPC call, in place of the three the starters stack by default (SquareGrpcApplication
 * and application.yml turn those off): Micrometer's gRPC observation, Micrometer's MetricCollecting interceptor and net.devh's A66 stream tracer.
 * It records the same metrics under the same names, tags, descriptions and buckets, with one object per call and no
 * registry lookup (docs/performance.md, "One metering layer"). With management.tracing.grpc.enabled=true Micrometer's
 * observation comes back, for tracing, and records its own meters: this layer then leaves them to it.
 */
@Configuration(proxyBeanMethods = false)
class GrpcServerMeteringConfiguration {

    /** net.devh's bean of Micrometer's observation, declared as a plain ServerInterceptor, so found by its name. */
    static final String NET_DEVH_OBSERVATION = "globalObservationGrpcServerInterceptorConfigurer";

    /**
     * Whether Micrometer's observation runs is whether net.devh declared its bean: under exactly net.devh's own
     * conditions (its property, an observation registry), which no copy of them here could drift from.
     */
    @Bean
    GrpcServerMeters grpcServerMeters(
            MeterRegistry registry,
            List<BindableService> services,
            ListableBeanFactory beans,
            ObjectProvider<ObservationProperties> observationProperties) {
        boolean observationRuns = beans.containsBeanDefinition(NET_DEVH_OBSERVATION);
        ObservationProperties observations = observationProperties.getIfAvailable(ObservationProperties::new);
        return new GrpcServerMeters(
                registry,
                services.stream().map(BindableService::bindService).toList(),
                !observationRuns,
                observations.getLongTaskTimer().isEnabled());
    }

    /** Where net.devh puts its metric interceptors, so that other interceptors see the same order as before. */
    @GrpcGlobalServerInterceptor
    @Order(InterceptorOrder.ORDER_TRACING_METRICS)
    MeteringInterceptor meteringInterceptor(GrpcServerMeters meters) {
        return new MeteringInterceptor(meters);
    }

    @Bean
    GrpcServerConfigurer meteringStreamTracer(GrpcServerMeters meters) {
        return serverBuilder -> serverBuilder.addStreamTracerFactory(new MeteredCall.Factory(meters));
    }
}
