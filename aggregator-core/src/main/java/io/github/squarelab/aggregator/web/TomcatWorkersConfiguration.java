package io.github.squarelab.aggregator.web;

import io.github.squarelab.aggregator.AggregatorProperties;
import io.github.squarelab.aggregator.admission.ConnectionBounds;
import io.github.squarelab.aggregator.admission.RequestLimit;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.core.env.Environment;

/**
 * Tomcat's connector runs its requests on {@link TomcatWorkers}: {@code server.tomcat.threads.max} threads that read a
 * new request only when the {@link RequestLimit} has a place for it or it has waited
 * {@code aggregator.admission.connection-wait}. Spring shuts them down with the context, after the server has stopped.
 * And every answer closes its connection while Tomcat holds all it may ({@link CloseConnectionsAtTheLimit}). Each Spring
 * Boot generation's {@code WebServerWiring} puts the workers on Tomcat's connector.
 */
@Configuration(proxyBeanMethods = false)
class TomcatWorkersConfiguration {

    /** Spring Boot's own default for {@code server.tomcat.threads.max}, in both generations. */
    static final int BOOT_DEFAULT_THREADS = 200;

    /**
     * {@code server.tomcat.threads.max} read from the environment: Spring Boot 3.5 binds it in ServerProperties, 4.1 in
     * TomcatServerProperties, under the same name.
     */
    @Bean(destroyMethod = "shutdown")
    TomcatWorkers tomcatWorkers(Environment environment, RequestLimit requestLimit, AggregatorProperties properties) {
        TomcatWorkers workers = new TomcatWorkers(
                environment.getProperty("server.tomcat.threads.max", Integer.class, BOOT_DEFAULT_THREADS),
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
}
