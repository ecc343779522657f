package io.github.squarelab.aggregator.web;

import io.github.squarelab.aggregator.AggregatorProperties;
import java.time.Duration;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.servlet.config.annotation.AsyncSupportConfigurer;
import org.springframework.web.servlet.config.annotation.WebMvcConfigurer;

/**
 * The fan-out enforces {@code aggregator.deadline} itself and answers 504 with a clear problem. Spring
 * MVC's own async timeout (30 s by default) must not cut in first with a bare 503, so it is set a little
 * beyond the deadline.
 */
@Configuration(proxyBeanMethods = false)
class AsyncRequestConfiguration implements WebMvcConfigurer {

    private static final Duration MARGIN = Duration.ofSeconds(5);

    private final Duration timeout;

    AsyncRequestConfiguration(AggregatorProperties properties) {
        this.timeout = properties.deadline().plus(MARGIN);
    }

    @Override
    public void configureAsyncSupport(AsyncSupportConfigurer configurer) {
        configurer.setDefaultTimeout(timeout.toMillis());
    }
}
