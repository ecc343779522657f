package io.github.squarelab.square.rest;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.env.EnvironmentPostProcessor;
import org.springframework.core.Ordered;
import org.springframework.core.env.ConfigurableEnvironment;

/** Spring Boot 3.5's hook for {@link SquareServer#prepare}, before anything starts (Boot 4.1 moved the interface). */
class SquareServerEnvironment implements EnvironmentPostProcessor, Ordered {

    @Override
    public void postProcessEnvironment(ConfigurableEnvironment environment, SpringApplication application) {
        SquareServer.prepare(environment);
    }

    /** After the config data (application.yml, profiles), where the property may be set too. */
    @Override
    public int getOrder() {
        return Ordered.LOWEST_PRECEDENCE;
    }
}
