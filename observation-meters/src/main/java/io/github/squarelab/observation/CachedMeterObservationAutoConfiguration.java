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
 * Puts {@link CachedMeterObservationHandler} where Spring Boot would put its {@code DefaultMeterObservationHandler}.
 *
 * <p>Boot defines its handler only when there is no {@link MeterObservationHandler} bean yet
 * ({@code ObservationAutoConfiguration.MeterObservationHandlerConfiguration}), so this runs before it, after the meter
 * registries (and the tracer, if any) are known, under Boot's own conditions: a meter registry, and no tracer (with
 * one, Boot's tracing-aware handler, which adds exemplars, is left in place). One handler, so every observation is
 * counted once. A service that defines its own {@link MeterObservationHandler} keeps it.
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
