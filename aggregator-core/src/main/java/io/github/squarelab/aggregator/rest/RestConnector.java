package io.github.squarelab.aggregator.rest;

import io.github.squarelab.aggregator.tls.ClientTls;
import java.util.Arrays;

/**
 * The HTTP clients a REST path can call through ({@code aggregator.rest.client}, {@code aggregator.rest.h2c-client});
 * AggregatorProperties.Rest accepts only these values.
 */
public enum RestConnector {
    /** Reactor Netty's HttpClient, used directly. */
    REACTOR_NETTY("reactor-netty"),
    /** Spring's WebClient over the same Reactor Netty client and pools: what WebClient itself costs. */
    WEBCLIENT("webclient"),
    /** WebClient over Jetty 12's reactive HttpClient. */
    JETTY("jetty"),
    /** WebClient over Apache HttpClient 5's async client. */
    APACHE("apache"),
    /** WebClient over java.net.http's HttpClient; HTTP/1.1 only. */
    JDK("jdk");

    private final String value;

    RestConnector(String value) {
        this.value = value;
    }

    /** The property's value that names this connector. */
    String value() {
        return value;
    }

    /**
     * The TLS provider the connector a property names (aggregator.rest.client or h2c-client) encrypts with: Reactor
     * Netty's Netty for the first two, the JDK's SSLContext for Jetty, Apache and java.net.http.
     */
    public static String tlsProvider(String property, String value) {
        RestConnector connector = of(property, value);
        return connector == REACTOR_NETTY || connector == WEBCLIENT
                ? ClientTls.nettyProvider()
                : ClientTls.jdkProvider();
    }

    static RestConnector of(String property, String value) {
        return Arrays.stream(values())
                .filter(connector -> connector.value.equals(value))
                .findFirst()
                .orElseThrow(() -> new IllegalArgumentException(property + " must be one of "
                        + String.join(
                                ", ",
                                Arrays.stream(values())
                                        .map(RestConnector::value)
                                        .toList()) + "; got '"
                        + value + "'"));
    }
}
