package io.github.squarelab.square.rest;

import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.core.env.Environment;

/** The web server the service runs on, chosen by {@value #PROPERTY} (SQUARE_SERVER) at start-up. */
enum SquareServer {
    /** Spring MVC on Tomcat. */
    TOMCAT(WebApplicationType.SERVLET),
    /** Spring MVC on Jetty 12. */
    JETTY(WebApplicationType.SERVLET),
    /** Spring WebFlux on Reactor Netty: the default, the cheapest per call over HTTP/1.1 and h2c (docs/performance.md). */
    NETTY(WebApplicationType.REACTIVE);

    static final String PROPERTY = "square.server";
    static final SquareServer DEFAULT = NETTY;

    final WebApplicationType webApplicationType;

    SquareServer(WebApplicationType webApplicationType) {
        this.webApplicationType = webApplicationType;
    }

    /** The server the environment asks for; a value that names none fails start-up, naming those that do. */
    static SquareServer of(Environment environment) {
        String value = environment.getProperty(PROPERTY, DEFAULT.toString());
        for (SquareServer server : values()) {
            if (server.toString().equalsIgnoreCase(value)) {
                return server;
            }
        }
        throw new InvalidConfigurationPropertyValueException(
                PROPERTY,
                value,
                "the accepted values are "
                        + Arrays.stream(values()).map(SquareServer::toString).collect(Collectors.joining(", "))
                        + " (" + DEFAULT + " when it is not set)");
    }

    /** As the property spells it. */
    @Override
    public String toString() {
        return name().toLowerCase(Locale.ROOT);
    }
}
