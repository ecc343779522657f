package io.github.squarelab.square.rest;

import io.github.squarelab.tls.TlsWords;
import io.netty.handler.ssl.OpenSsl;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Supplier;
import org.springframework.boot.actuate.info.Info;
import org.springframework.boot.actuate.info.InfoContributor;
import org.springframework.core.env.Environment;

/**
 * What the service runs on, under {@code square} in {@code GET /actuator/info}: tools such as the lab check here that
 * the server they asked for is the one that answers. Under TLS, {@code tls} says the mode and the provider that
 * encrypts (never a key or a path to one).
 */
public class ServerInfo implements InfoContributor {

    private final Supplier<Object> webServer;
    private final Environment environment;

    /**
     * @param webServer the web server the context runs, which each Spring generation's wiring finds where that
     *     generation keeps it
     */
    public ServerInfo(Supplier<Object> webServer, Environment environment) {
        this.webServer = webServer;
        this.environment = environment;
    }

    @Override
    public void contribute(Info.Builder builder) {
        Map<String, Object> details = new LinkedHashMap<>();
        details.put("server", SquareServer.of(environment).toString());
        details.put("web-server", webServer.get().getClass().getSimpleName());
        details.put("virtual-threads", environment.getProperty("spring.threads.virtual.enabled", Boolean.class, false));
        details.put("java", Runtime.version().toString());
        builder.withDetail("square", details);
        if (environment.containsProperty("server.ssl.bundle")
                && environment.getProperty("server.ssl.enabled", Boolean.class, true)) {
            Map<String, Object> tls = new LinkedHashMap<>();
            tls.put("mode", "need".equalsIgnoreCase(environment.getProperty("server.ssl.client-auth")) ? "mtls" : "on");
            tls.put("provider", provider(SquareServer.of(environment)));
            builder.withDetail("tls", tls);
        }
    }

    /**
     * Reactor Netty encrypts with OpenSSL through netty-tcnative where it loads (Netty then prefers it); Tomcat and
     * Jetty, as Spring Boot configures them, with the JDK's SSLEngine.
     */
    private static String provider(SquareServer server) {
        return TlsWords.provider(server == SquareServer.NETTY && OpenSsl.isAvailable(), OpenSsl::versionString);
    }
}
