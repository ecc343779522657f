package io.github.squarelab.aggregator.web;

import io.github.squarelab.aggregator.AggregatorProperties;
import io.github.squarelab.aggregator.admission.ConnectionBounds;
import io.github.squarelab.aggregator.admission.RequestLimit;
import org.apache.coyote.AbstractProtocol;
import org.springframework.boot.autoconfigure.web.ServerProperties;
import org.springframework.boot.web.embedded.tomcat.TomcatServletWebServerFactory;
import org.springframework.boot.web.server.WebServerFactoryCustomizer;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;

/**
 * Tomcat's connector runs its requests on {@link TomcatWorkers}: {@code server.tomcat.threads.max} threads that read a
 * new request only when the {@link RequestLimit} has a place for it or it has waited
 * {@code aggregator.admission.connection-wait}. Spring shuts them down with the context, after the server has stopped.
 * And every answer closes its connection while Tomcat holds all it may ({@link CloseConnectionsAtTheLimit}).
 */
@Configuration(proxyBeanMethods = false)
class TomcatWorkersConfiguration {

    @Bean(destroyMethod = "shutdown")
    TomcatWorkers tomcatWorkers(ServerProperties server, RequestLimit requestLimit, AggregatorProperties properties) {
        TomcatWorkers workers = new TomcatWorkers(
                server.getTomcat().getThreads().getMax(),
                "http-nio-exec-",
                requestLimit::hasRoom,
                properties.admission().connectionWait(),
                System::nanoTime);
        requestLimit.whenReleased(workers::placeFreed);
        return workers;
    }

    @Bean
    FilterRegistrationBean<CloseConnectionsAtTheLimit> closeConnectionsAtTheLimit(ConnectionBounds bounds) {
        FilterRegistrationBean<CloseConnectionsAtTheLimit> registration =
                new FilterRegistrationBean<>(new CloseConnectionsAtTheLimit(bounds));
        registration.setOrder(Ordered.HIGHEST_PRECEDENCE);
        return registration;
    }

    @Bean
    WebServerFactoryCustomizer<TomcatServletWebServerFactory> tomcatWorkersOnTheConnector(TomcatWorkers workers) {
        return factory -> factory.addProtocolHandlerCustomizers(protocol -> {
            if (protocol instanceof AbstractProtocol<?> tomcatProtocol) {
                tomcatProtocol.setExecutor(workers);
            }
        });
    }
}
