package io.github.squarelab.aggregator.tls;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * @param bundle the SSL bundle (spring.ssl.bundle.*) the aggregator's clients reach the square services with; empty
 *     for plaintext, the default
 */
@ConfigurationProperties("aggregator.tls")
public record TlsProperties(String bundle) {}
