package io.github.squarelab.square.rest;

import org.springframework.boot.test.autoconfigure.actuate.observability.AutoConfigureObservability;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;

@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT, properties = "square.server=jetty")
@AutoConfigureObservability
class JettyObservationMetricsTests extends ObservationMetricsContract {}
