package io.github.squarelab.square.rest;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.springframework.boot.EnvironmentPostProcessor;
import org.springframework.boot.SpringApplication;
import org.springframework.core.Ordered;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;
import org.springframework.util.StringUtils;

/**
 * Spring Boot 4.1's hook for {@link SquareServer#prepare}, before anything starts (Boot 3.5's interface, in
 * org.springframework.boot.env, is deprecated for removal in 4.2). And with the actuator on a port of its own
 * (management.server.port), only the chosen server's management context: Boot 4.1 has one per server, all of one name,
 * and with three servers on the classpath they would clash where Boot 3.5 had one for any server.
 */
class SquareServerEnvironment implements EnvironmentPostProcessor, Ordered {

    static final String EXCLUDE = "spring.autoconfigure.exclude";

    private static final String TOMCAT = "org.springframework.boot.tomcat.autoconfigure.actuate.web.server.";
    private static final String JETTY = "org.springframework.boot.jetty.autoconfigure.actuate.web.server.";

    /** The management contexts of the servers a square.server does not run. */
    private static final Map<SquareServer, List<String>> OTHER_MANAGEMENT_CONTEXTS = Map.of(
            SquareServer.NETTY,
                    List.of(
                            TOMCAT + "TomcatReactiveManagementContextAutoConfiguration",
                            JETTY + "JettyReactiveManagementContextAutoConfiguration"),
            SquareServer.TOMCAT, List.of(JETTY + "JettyServletManagementContextAutoConfiguration"),
            SquareServer.JETTY, List.of(TOMCAT + "TomcatServletManagementContextAutoConfiguration"));

    @Override
    public void postProcessEnvironment(ConfigurableEnvironment environment, SpringApplication application) {
        SquareServer.prepare(environment);
        List<String> excluded =
                new ArrayList<>(StringUtils.commaDelimitedListToSet(environment.getProperty(EXCLUDE, "")));
        excluded.addAll(OTHER_MANAGEMENT_CONTEXTS.get(SquareServer.of(environment)));
        environment
                .getPropertySources()
                .addFirst(new MapPropertySource("squareServerManagement", Map.of(EXCLUDE, String.join(",", excluded))));
    }

    /** After the config data (application.yml, profiles), where the property may be set too. */
    @Override
    public int getOrder() {
        return Ordered.LOWEST_PRECEDENCE;
    }
}
