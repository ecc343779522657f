package io.github.squarelab.observation.process;

import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * What a lab that did not start a service needs of it to measure it over a window: its resident memory beside
 * Micrometer's process CPU time, and where it runs in {@code /actuator/info}. Every service that depends on this module
 * gets both.
 */
@AutoConfiguration
@ConditionalOnClass(MeterRegistry.class)
public class ProcessResourcesAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    ResidentMemoryMetrics residentMemoryMetrics() {
        return new ResidentMemoryMetrics(new ResidentMemory());
    }

    /** Only where the actuator's info endpoint can show it. */
    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnClass(name = "org.springframework.boot.actuate.info.InfoContributor")
    WhereItRunsInfoContributor whereItRunsInfoContributor() {
        return new WhereItRunsInfoContributor();
    }
}
