package io.github.squarelab.square.grpc;

import io.github.squarelab.observation.LongTaskTimers;
import io.github.squarelab.square.grpc.metering.GrpcServerMeters;
import io.github.squarelab.square.grpc.metering.MeteringInterceptor;
import io.github.squarelab.tls.TlsWords;
import io.grpc.BindableService;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.netty.shaded.io.netty.handler.ssl.OpenSsl;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.List;
import net.devh.boot.grpc.common.util.InterceptorOrder;
import net.devh.boot.grpc.server.config.GrpcServerProperties;
import net.devh.boot.grpc.server.event.GrpcServerStartedEvent;
import net.devh.boot.grpc.server.interceptor.GrpcGlobalServerInterceptor;
import net.devh.boot.grpc.server.serverfactory.GrpcServerConfigurer;
import net.devh.boot.grpc.server.service.GrpcService;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.web.context.WebServerInitializedEvent;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.event.EventListener;
import org.springframework.core.annotation.Order;
import org.springframework.core.env.Environment;

/**
 * Spring Boot 3.5's wiring of the gRPC square service to net.devh's starter (boot4/square-grpc-service has Spring gRPC's):
 * the service, its transport settings, the one metering layer and what /actuator/info and the log say of the server.
 */
@Configuration(proxyBeanMethods = false)
class GrpcServerWiring {

    /** net.devh's switch for TLS on the gRPC port. */
    static final String TLS = "grpc.server.security.enabled";

    /** net.devh's bean of Micrometer's observation, declared as a plain ServerInterceptor, so found by its name. */
    static final String NET_DEVH_OBSERVATION = "globalObservationGrpcServerInterceptorConfigurer";

    private final Environment environment;

    GrpcServerWiring(Environment environment) {
        this.environment = environment;
    }

    @Bean
    @GrpcService
    SquareRpcService squareRpcService() {
        return new SquareRpcService();
    }

    /**
     * Squaring a number never blocks, so calls run on the transport's event loop, as grpc-java recommends for
     * non-blocking services, instead of hopping to the default cached thread pool for every message; and each stream
     * and connection gets the service's flow-control window.
     */
    @Bean
    GrpcServerConfigurer squareTransport() {
        return serverBuilder -> {
            serverBuilder.directExecutor();
            if (serverBuilder instanceof NettyServerBuilder netty) {
                netty.flowControlWindow(SquareRpcService.FLOW_CONTROL_WINDOW_BYTES);
            }
        };
    }

    /**
     * One metering layer for every gRPC call, in place of the three net.devh stacks by default (SquareGrpcApplication
     * and application.yml turn those off): Micrometer's gRPC observation, Micrometer's MetricCollecting interceptor and
     * net.devh's A66 stream tracer (docs/performance.md, "One metering layer"). With
     * management.tracing.grpc.enabled=true Micrometer's observation comes back, for tracing, and records its own
     * meters: this layer then leaves them to it. Whether it runs is whether net.devh declared its bean, under exactly
     * net.devh's own conditions, which no copy of them here could drift from.
     */
    @Bean
    GrpcServerMeters grpcServerMeters(
            MeterRegistry registry,
            List<BindableService> services,
            ListableBeanFactory beans,
            Environment environment) {
        return new GrpcServerMeters(
                registry,
                services.stream().map(BindableService::bindService).toList(),
                !beans.containsBeanDefinition(NET_DEVH_OBSERVATION),
                LongTaskTimers.enabled(environment));
    }

    /** Where net.devh puts its metric interceptors, so that other interceptors see the same order as before. */
    @GrpcGlobalServerInterceptor
    @Order(InterceptorOrder.ORDER_TRACING_METRICS)
    MeteringInterceptor meteringInterceptor(GrpcServerMeters meters) {
        return new MeteringInterceptor(meters);
    }

    @Bean
    GrpcServerConfigurer meteringStreamTracer(GrpcServerMeters meters) {
        return serverBuilder -> serverBuilder.addStreamTracerFactory(meters.streamTracerFactory());
    }

    @Bean
    GrpcServerInfo grpcServerInfo(GrpcServerProperties properties, List<BindableService> services) {
        return new GrpcServerInfo(properties::getPort, properties.isReflectionServiceEnabled(), services);
    }

    /** net.devh serves on grpc-netty-shaded: its loggers. */
    @Bean
    @ConditionalOnProperty(name = TLS, havingValue = "true")
    TlsRefusalLog tlsRefusalLog() {
        return new TlsRefusalLog(TlsRefusalLog.SHADED);
    }

    /** grpc-netty-shaded carries netty-tcnative's BoringSSL, under its own package. */
    @Bean
    @ConditionalOnProperty(name = TLS, havingValue = "true")
    TlsInfo tlsInfo() {
        return new TlsInfo(mutual(environment), () -> TlsWords.provider(OpenSsl.isAvailable(), OpenSsl::versionString));
    }

    @EventListener
    void onGrpcServerStarted(GrpcServerStartedEvent event) {
        StartupLog.grpcListening(
                environment.getProperty(TLS, Boolean.class, false),
                mutual(environment),
                event.getAddress(),
                event.getPort());
    }

    @EventListener
    void onWebServerStarted(WebServerInitializedEvent event) {
        StartupLog.actuatorListening(event.getWebServer().getPort());
    }

    private static boolean mutual(Environment environment) {
        return "REQUIRE".equalsIgnoreCase(environment.getProperty("grpc.server.security.client-auth", ""));
    }
}
