package io.github.squarelab.aggregator.tls;

import io.github.squarelab.aggregator.AggregatorProperties;
import org.springframework.boot.ssl.SslBundles;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

@Configuration(proxyBeanMethods = false)
class ClientTlsConfiguration {

    /** Fails at start-up on a bundle that does not exist or a REST base URL whose scheme does not match. */
    @Bean
    ClientTls clientTls(TlsProperties tls, SslBundles bundles, AggregatorProperties properties) {
        ClientTls clientTls = tls.bundle() == null || tls.bundle().isBlank()
                ? ClientTls.plaintext()
                : ClientTls.of(tls.bundle(), bundles.getBundle(tls.bundle()));
        clientTls.requireScheme(properties.rest().baseUrl());
        return clientTls;
    }
}
