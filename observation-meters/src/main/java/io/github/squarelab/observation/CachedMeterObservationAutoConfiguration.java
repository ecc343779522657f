package io.github.squarelab.observation;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.observation.DefaultMeterObservationHandler;
import io.micrometer.core.instrument.observation.MeterObservationHandler;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.core.env.Environment;

/**
 * Puts {@link CachedMeterObservationHandler} where Spring Boot would put its default handler, under Boot's conditions
 * (a meter registry, no tracer, no {@link MeterObservationHandler} bean of the service's own), so one handler counts.
 *
 * <p>One class for both Spring Boot generations, which name these auto-configurations differently (Boot 3.5's
 * {@code actuate.autoconfigure} packages, Boot 4.1's {@code micrometer.*.autoconfigure} modules): each name that a
 * generation lacks orders nothing. Boot 3.5's default handler backs off for this one; Boot 4.1 always declares its own
 * and hands each observation to the first handler of the group that supports it, which is this one (first in order).
 */
@AutoConfiguration(
        beforeName = {
            "org.springframework.boot.actuate.autoconfigure.observation.ObservationAutoConfiguration",
            "org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration"
        },
        afterName = {
            "org.springframework.boot.actuate.autoconfigure.metrics.CompositeMeterRegistryAutoConfiguration",
            "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
            "org.springframework.boot.actuate.autoconfigure.tracing.MicrometerTracingAutoConfiguration",
            "org.springframework.boot.micrometer.tracing.autoconfigure.MicrometerTracingAutoConfiguration"
        })
@ConditionalOnBean(MeterRegistry.class)
public class CachedMeterObservationAutoConfiguration {

    /** Boot's own default handler is no service's own: Boot 4.1 declares it whatever else there is. */
    @Bean
    @Order(Ordered.HIGHEST_PRECEDENCE)
    @ConditionalOnMissingBean(
            value = MeterObservationHandler.class,
            ignored = DefaultMeterObservationHandler.class,
            type = "io.micrometer.tracing.Tracer")
    CachedMeterObservationHandler cachedMeterObservationHandler(MeterRegistry registry, Environment environment) {
        return new CachedMeterObservationHandler(registry, LongTaskTimers.enabled(environment));
    }
}
