package io.github.squarelab.aggregator;

import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.springframework.boot.micrometer.metrics.test.autoconfigure.AutoConfigureMetrics;

/**
 * Metrics exported in a Spring test, as Spring Boot 4.1's test support spells it, for the tests both generations run
 * from aggregator-service's test jar (which has Boot 3.5's own, and leaves it out of the jar).
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Inherited
@AutoConfigureMetrics
public @interface TestMetricsExport {}
