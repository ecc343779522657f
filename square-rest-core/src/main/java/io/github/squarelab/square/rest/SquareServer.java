package io.github.squarelab.square.rest;

import java.util.Arrays;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.Environment;
import org.springframework.core.env.MapPropertySource;

/** The web server the service runs on, chosen by {@value #PROPERTY} (SQUARE_SERVER) at start-up. */
public enum SquareServer {
    /** Spring MVC on Tomcat. */
    TOMCAT(WebApplicationType.SERVLET),
    /** Spring MVC on Jetty 12. */
    JETTY(WebApplicationType.SERVLET),
    /** Spring WebFlux on Reactor Netty: the default, the cheapest per call over HTTP/1.1 and h2c (docs/performance.md). */
    NETTY(WebApplicationType.REACTIVE);

    public static final String PROPERTY = "square.server";
    static final SquareServer DEFAULT = NETTY;

    final WebApplicationType webApplicationType;

    SquareServer(WebApplicationType webApplicationType) {
        this.webApplicationType = webApplicationType;
    }

    /** The server the environment asks for; a value that names none fails start-up, naming those that do. */
    public static SquareServer of(Environment environment) {
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

    static final String WEB_APPLICATION_TYPE = "spring.main.web-application-type";

    /**
     * Checks {@value #PROPERTY} before anything starts, so that a wrong value fails at once, and makes netty a reactive
     * application: with Spring MVC on the classpath Boot would make it a servlet one. Tomcat and jetty are the servlet
     * application Boot deduces, so nothing is set for them (a test slice that asks for reactive keeps it). Each Spring
     * generation's environment post-processor (an interface each keeps elsewhere) calls it after the config data.
     */
    public static void prepare(ConfigurableEnvironment environment) {
        SquareServer server = of(environment);
        String explicit = environment.getProperty(WEB_APPLICATION_TYPE);
        if (explicit != null && !explicit.equalsIgnoreCase(server.webApplicationType.name())) {
            throw new InvalidConfigurationPropertyValueException(
                    WEB_APPLICATION_TYPE,
                    explicit,
                    PROPERTY + "=" + server + " runs a "
                            + server.webApplicationType.name().toLowerCase(Locale.ROOT) + " application");
        }
        if (server.webApplicationType == WebApplicationType.REACTIVE) {
            environment
                    .getPropertySources()
                    .addLast(new MapPropertySource(
                            "squareServer", Map.of(WEB_APPLICATION_TYPE, server.webApplicationType.name())));
        }
    }

    /** As the property spells it. */
    @Override
    public String toString() {
        return name().toLowerCase(Locale.ROOT);
    }
}
