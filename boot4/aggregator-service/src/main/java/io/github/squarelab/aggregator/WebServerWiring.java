package io.github.squarelab.aggregator;

import io.github.squarelab.aggregator.admission.ConnectionBounds;
import io.github.squarelab.aggregator.web.StartupLog;
import io.github.squarelab.aggregator.web.TomcatWorkers;
import org.springframework.boot.tomcat.servlet.TomcatServletWebServerFactory;
import org.springframework.boot.web.server.WebServerFactoryCustomizer;
import org.springframework.boot.web.server.context.WebServerInitializedEvent;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.event.EventListener;

/**
 * Spring Boot 4.1's wiring of the aggregator's web server (aggregator-service has Boot 3.5's; Boot 4 moved Tomcat's
 * factory to org.springframework.boot.tomcat and the server events to web.server.context): Tomcat's connector bounded
 * and run on the aggregator's workers, and the start-up line once it listens.
 */
@Configuration(proxyBeanMethods = false)
class WebServerWiring {

    @Bean
    WebServerFactoryCustomizer<TomcatServletWebServerFactory> aggregatorTomcat(
            ConnectionBounds bounds, TomcatWorkers workers) {
        return factory -> {
            factory.addConnectorCustomizers(bounds::customize);
            factory.addProtocolHandlerCustomizers(workers::runOn);
        };
    }

    @Bean
    StartupListener startupListener(StartupLog log) {
        return new StartupListener(log);
    }

    record StartupListener(StartupLog log) {

        @EventListener
        void onWebServerStarted(WebServerInitializedEvent event) {
            log.listening(event.getWebServer().getPort());
        }
    }
}
