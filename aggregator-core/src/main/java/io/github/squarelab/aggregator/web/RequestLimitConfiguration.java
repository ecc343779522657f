package io.github.squarelab.aggregator.web;

import io.github.squarelab.aggregator.AggregatorProperties;
import io.github.squarelab.aggregator.admission.RequestLimit;
import io.github.squarelab.aggregator.admission.RequestLimitInterceptor;
import io.github.squarelab.aggregator.fanout.FanoutMetrics;
import io.github.squarelab.aggregator.fanout.Transport;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.servlet.config.annotation.InterceptorRegistry;
import org.springframework.web.servlet.config.annotation.WebMvcConfigurer;

/**
 * The fan-out paths pass the {@link RequestLimit} first, from {@code aggregator.admission.max-requests} or, when that is
 * 0, from the heap; a request shed there counts in {@code aggregator.admission.shed} like one the square budget sheds.
 */
@Configuration(proxyBeanMethods = false)
class RequestLimitConfiguration implements WebMvcConfigurer {

    private final RequestLimitInterceptor interceptor;

    RequestLimitConfiguration(RequestLimit requestLimit, AggregatorProperties properties, FanoutMetrics metrics) {
        this.interceptor = new RequestLimitInterceptor(
                requestLimit, properties.admission(), request -> Transport.ofPath(request.getRequestURI())
                        .ifPresent(metrics::shed));
    }

    @Bean
    static RequestLimit requestLimit(AggregatorProperties properties, MeterRegistry registry) {
        long configured = properties.admission().maxRequests();
        long max = configured > 0
                ? configured
                : RequestLimit.defaultFor(Runtime.getRuntime().maxMemory());
        return new RequestLimit(max, registry);
    }

    @Override
    public void addInterceptors(InterceptorRegistry registry) {
        registry.addInterceptor(interceptor).addPathPatterns("/rest/*/*", "/grpc/*/*");
    }
}
