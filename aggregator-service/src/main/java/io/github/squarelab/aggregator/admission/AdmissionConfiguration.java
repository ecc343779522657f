package io.github.squarelab.aggregator.admission;

import io.github.squarelab.aggregator.AggregatorProperties;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** The admission budget, from {@code aggregator.admission.max-squares} or, when that is 0, from the heap. */
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
}
