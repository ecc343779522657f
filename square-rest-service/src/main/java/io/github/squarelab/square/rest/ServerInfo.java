package io.github.squarelab.square.rest;

import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.boot.actuate.info.Info;
import org.springframework.boot.actuate.info.InfoContributor;
import org.springframework.boot.web.context.WebServerApplicationContext;
import org.springframework.core.env.Environment;
import org.springframework.stereotype.Component;

/**
 * What the service runs on, under {@code square} in {@code GET /actuator/info}: tools such as the lab check here that
 * the server they asked for is the one that answers.
 */
@Component
class ServerInfo implements InfoContributor {

    private final WebServerApplicationContext context;
    private final Environment environment;

    ServerInfo(WebServerApplicationContext context, Environment environment) {
        this.context = context;
        this.environment = environment;
    }

    @Override
    public void contribute(Info.Builder builder) {
        Map<String, Object> details = new LinkedHashMap<>();
        details.put("server", SquareServer.of(environment).toString());
        details.put("web-server", context.getWebServer().getClass().getSimpleName());
        details.put("virtual-threads", environment.getProperty("spring.threads.virtual.enabled", Boolean.class, false));
        details.put("java", Runtime.version().toString());
        builder.withDetail("square", details);
    }
}
