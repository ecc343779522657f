package io.github.squarelab.square.rest;

import org.springframework.boot.micrometer.metrics.test.autoconfigure.AutoConfigureMetrics;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;

@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT, properties = "square.server=tomcat")
@AutoConfigureMetrics
class TomcatObservationMetricsTests extends ObservationMetricsContract {}
