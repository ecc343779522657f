package io.github.squarelab.aggregator.web;

import org.springframework.boot.test.autoconfigure.actuate.observability.AutoConfigureObservability;

/** The contract's http_server_requests pins on Spring Boot 3.5, whose test support exports metrics when asked so. */
@AutoConfigureObservability
class ObservationMetricsTests extends ObservationMetricsContract {}
