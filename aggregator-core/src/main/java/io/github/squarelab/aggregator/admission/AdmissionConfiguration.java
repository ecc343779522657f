package io.github.squarelab.aggregator.admission;

import io.github.squarelab.aggregator.AggregatorProperties;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The admission budget, from {@code aggregator.admission.max-squares} or, when that is 0, from the heap; and the
 * deadline admission, which lets a request in only if its path can be expected to answer it within
 * {@code aggregator.admission.deadline-share} of {@code aggregator.deadline}.
 */
@Configuration(proxyBeanMethods = false)
class AdmissionConfiguration {

    @Bean
    AdmissionBudget admissionBudget(AggregatorProperties properties, MeterRegistry registry) {
        long configured = properties.admission().maxSquares();
        long maxSquares = configured > 0
                ? configured
                : AdmissionBudget.defaultFor(Runtime.getRuntime().maxMemory());
        return new AdmissionBudget(maxSquares, registry);
    }

    @Bean
    DeadlineAdmission deadlineAdmission(AggregatorProperties properties, MeterRegistry registry) {
        return DeadlineAdmission.from(properties, DeadlineAdmission.Clocks.system(), registry);
    }
}
