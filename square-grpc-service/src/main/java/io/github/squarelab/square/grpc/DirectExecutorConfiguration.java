package io.github.squarelab.square.grpc;

import net.devh.boot.grpc.server.serverfactory.GrpcServerConfigurer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Squaring a number never blocks, so calls run on the transport's event loop, as grpc-java recommends for
 * non-blocking services, instead of hopping to the default cached thread pool for every message.
 */
@Configuration(proxyBeanMethods = false)
class DirectExecutorConfiguration {

    @Bean
    GrpcServerConfigurer directExecutor() {
        return serverBuilder -> serverBuilder.directExecutor();
    }
}
