package io.github.squarelab.square.grpc;

import io.github.squarelab.observation.LongTaskTimers;
import io.github.squarelab.square.grpc.metering.GrpcServerMeters;
import io.github.squarelab.square.grpc.metering.MeteringInterceptor;
import io.github.squarelab.tls.TlsWords;
import io.grpc.BindableService;
import io.grpc.ServerBuilder;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.protobuf.services.ProtoReflectionService;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.grpc.ObservationGrpcServerInterceptor;
import io.netty.handler.ssl.OpenSsl;
import java.util.List;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.grpc.server.autoconfigure.GrpcServerProperties;
import org.springframework.boot.web.server.context.WebServerInitializedEvent;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.event.EventListener;
import org.springframework.core.annotation.Order;
import org.springframework.core.env.Environment;
import org.springframework.grpc.server.GlobalServerInterceptor;
import org.springframework.grpc.server.ServerBuilderCustomizer;
import org.springframework.grpc.server.lifecycle.GrpcServerStartedEvent;

/**
 * Spring Boot 4.1's wiring of the gRPC square service to Spring gRPC (square-grpc-service has net.devh's for Boot 3.5):
 * the service, its transport settings, the one metering layer and what /actuator/info and the log say of the server.
 */
@Configuration(proxyBeanMethods = false)
class GrpcServerWiring {

    /** Spring gRPC's TLS: an SSL bundle for the gRPC port. */
    static final String TLS = "spring.grpc.server.ssl.bundle";

    private final Environment environment;

    GrpcServerWiring(Environment environment) {
        this.environment = environment;
    }

    /** Spring gRPC serves every BindableService bean. */
    @Bean
    SquareRpcService squareRpcService() {
        return new SquareRpcService();
    }

    /**
     * The reflection service net.devh served, grpc.reflection.v1alpha, in place of Spring gRPC's v1 (application.yml
     * turns that off): the same services, and so the same grpc_server_* series and /actuator/info, on both generations.
     */
    @Bean
    @SuppressWarnings("deprecation")
    BindableService squareReflectionService() {
        return ProtoReflectionService.newInstance();
    }

    /**
     * Squaring a number never blocks, so calls run on the transport's event loop, as grpc-java recommends for
     * non-blocking services, instead of hopping to the default cached thread pool for every message; and each stream
     * and connection gets the service's flow-control window. Every server builder (the in-process one too).
     */
    @Bean
    <T extends ServerBuilder<T>> ServerBuilderCustomizer<T> squareTransport() {
        return serverBuilder -> {
            serverBuilder.directExecutor();
            if (serverBuilder instanceof NettyServerBuilder netty) {
                netty.flowControlWindow(SquareRpcService.FLOW_CONTROL_WINDOW_BYTES);
            }
        };
    }

    /**
     * One metering layer for every gRPC call (docs/performance.md, "One metering layer"). With
     * spring.grpc.server.observation.enabled=true Micrometer's observation comes back, for tracing, and records its own
     * meters: this layer then leaves them to it. Whether it runs is whether Spring gRPC declared its interceptor.
     */
    @Bean
    GrpcServerMeters grpcServerMeters(
            MeterRegistry registry,
            List<BindableService> services,
            ObjectProvider<ObservationGrpcServerInterceptor> observation) {
        return new GrpcServerMeters(
                registry,
                services.stream().map(BindableService::bindService).toList(),
                observation.getIfAvailable() == null,
                LongTaskTimers.enabled(environment));
    }

    /** Where Spring gRPC puts Micrometer's observation (order 0): outside every interceptor of the service's own. */
    @Bean
    @GlobalServerInterceptor
    @Order(0)
    MeteringInterceptor meteringInterceptor(GrpcServerMeters meters) {
        return new MeteringInterceptor(meters);
    }

    @Bean
    <T extends ServerBuilder<T>> ServerBuilderCustomizer<T> meteringStreamTracer(GrpcServerMeters meters) {
        return serverBuilder -> serverBuilder.addStreamTracerFactory(meters.streamTracerFactory());
    }

    /** Spring gRPC binds 9090 unless told: application.yml says 6565. */
    @Bean
    GrpcServerInfo grpcServerInfo(GrpcServerProperties properties, List<BindableService> services) {
        return new GrpcServerInfo(() -> properties.getPort() != null ? properties.getPort() : 9090, true, services);
    }

    /** Spring gRPC serves on grpc-netty, unshaded: its loggers. */
    @Bean
    @ConditionalOnProperty(name = TLS)
    TlsRefusalLog tlsRefusalLog() {
        return new TlsRefusalLog(TlsRefusalLog.UNSHADED);
    }

    /** grpc-netty runs on the Netty Boot manages, with netty-tcnative's BoringSSL beside it. */
    @Bean
    @ConditionalOnProperty(name = TLS)
    TlsInfo tlsInfo() {
        return new TlsInfo(mutual(), () -> TlsWords.provider(OpenSsl.isAvailable(), OpenSsl::versionString));
    }

    /** The address as configured ("*" for every one, as net.devh says it), not Spring gRPC's list of bound ones. */
    @EventListener
    void onGrpcServerStarted(GrpcServerStartedEvent event) {
        if (event.getPort() >= 0) {
            StartupLog.grpcListening(
                    environment.containsProperty(TLS),
                    mutual(),
                    environment.getProperty("spring.grpc.server.address", "*"),
                    event.getPort());
        }
    }

    @EventListener
    void onWebServerStarted(WebServerInitializedEvent event) {
        StartupLog.actuatorListening(event.getWebServer().getPort());
    }

    private boolean mutual() {
        return "REQUIRE".equalsIgnoreCase(environment.getProperty("spring.grpc.server.ssl.client-auth", ""));
    }
}
