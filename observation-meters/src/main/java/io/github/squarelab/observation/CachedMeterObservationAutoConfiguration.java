package io.github.squarelab.observation;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.observation.MeterObservationHandler;
import org.springframework.boot.actuate.autoconfigure.metrics.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.observation.ObservationAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.observation.ObservationProperties;
import org.springframework.boot.actuate.autoconfigure.tracing.MicrometerTracingAutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

/**
 * Puts {@link CachedMeterObservationHandler} where Spring Boot would put its default handler, under Boot's conditions
 * (a meter registry, no tracer, no {@link MeterObservationHandler} bean of the service's own), so one handler counts.
 */
@AutoConfiguration(
        before = ObservationAutoConfiguration.class,
        after = {CompositeMeterRegistryAutoConfiguration.class, MicrometerTracingAutoConfiguration.class})
@ConditionalOnBean(MeterRegistry.class)
@EnableConfigurationProperties(ObservationProperties.class)
public class CachedMeterObservationAutoConfiguration {

    /** {@code management.observations.long-task-timer.enabled}, as Boot reads it for its own handler. */
    @Bean
    @ConditionalOnMissingBean(value = MeterObservationHandler.class, type = "io.micrometer.tracing.Tracer")
    CachedMeterObservationHandler cachedMeterObservationHandler(
            MeterRegistry registry, ObservationProperties properties) {
        return new CachedMeterObservationHandler(
                registry, properties.getLongTaskTimer().isEnabled());
    }
}
