package io.github.squarelab.square.rest;

import java.util.Locale;
import java.util.Map;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.env.EnvironmentPostProcessor;
import org.springframework.core.Ordered;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;

/**
 * Checks {@value SquareServer#PROPERTY} before anything starts, so that a wrong value fails at once, and makes netty a
 * reactive application: with Spring MVC on the classpath Boot would make it a servlet one. Tomcat and jetty are the
 * servlet application Boot deduces, so nothing is set for them (a test slice that asks for reactive keeps it).
 */
class SquareServerEnvironment implements EnvironmentPostProcessor, Ordered {

    static final String WEB_APPLICATION_TYPE = "spring.main.web-application-type";

    @Override
    public void postProcessEnvironment(ConfigurableEnvironment environment, SpringApplication application) {
        SquareServer server = SquareServer.of(environment);
        String explicit = environment.getProperty(WEB_APPLICATION_TYPE);
        if (explicit != null && !explicit.equalsIgnoreCase(server.webApplicationType.name())) {
            throw new InvalidConfigurationPropertyValueException(
                    WEB_APPLICATION_TYPE,
                    explicit,
                    SquareServer.PROPERTY + "=" + server + " runs a "
                            + server.webApplicationType.name().toLowerCase(Locale.ROOT) + " application");
        }
        if (server.webApplicationType == WebApplicationType.REACTIVE) {
            environment
                    .getPropertySources()
                    .addLast(new MapPropertySource(
                            "squareServer", Map.of(WEB_APPLICATION_TYPE, server.webApplicationType.name())));
        }
    }

    /** After the config data (application.yml, profiles), where the property may be set too. */
    @Override
    public int getOrder() {
        return Ordered.LOWEST_PRECEDENCE;
    }
}
