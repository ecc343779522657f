package io.github.squarelab.aggregator.web;

import org.springframework.boot.micrometer.metrics.test.autoconfigure.AutoConfigureMetrics;

/** The contract's http_server_requests pins on Spring Boot 4.1, whose test support exports metrics when asked so. */
@AutoConfigureMetrics
class ObservationMetricsTests extends ObservationMetricsContract {}
