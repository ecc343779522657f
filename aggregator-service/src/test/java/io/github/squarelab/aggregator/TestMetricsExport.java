package io.github.squarelab.aggregator;

import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.springframework.boot.test.autoconfigure.actuate.observability.AutoConfigureObservability;

/**
 * Metrics exported in a Spring test, as Spring Boot 3.5's test support spells it: the tests both generations run (the
 * end-to-end tests in this module's test jar) carry this annotation, and each generation defines it for itself
 * (boot4/aggregator-service's with Boot 4.1's @AutoConfigureMetrics); the test jar leaves this one out.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Inherited
@AutoConfigureObservability
public @interface TestMetricsExport {}
