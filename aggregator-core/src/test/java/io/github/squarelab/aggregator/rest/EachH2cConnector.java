package io.github.squarelab.aggregator.rest;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** A test of rest/h2c's client, run once for each HTTP client that speaks HTTP/2 cleartext with prior knowledge. */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@ParameterizedTest(name = "{0}")
@EnumSource(value = RestConnector.class, names = "JDK", mode = EnumSource.Mode.EXCLUDE)
@interface EachH2cConnector {}
