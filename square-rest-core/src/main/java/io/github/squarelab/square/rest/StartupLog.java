package io.github.squarelab.square.rest;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.core.env.Environment;

/**
 * One line that says where to reach the service, with the port actually bound and whether it speaks TLS: each Spring
 * generation's wiring calls it when it hears that a web server listens (an event each generation keeps elsewhere).
 */
public final class StartupLog {

    private static final Logger log = LoggerFactory.getLogger(StartupLog.class);

    private StartupLog() {}

    /**
     * @param namespace the server's namespace in its context: "management" for the actuator's own port, else null
     * @param webServer the web server that listens
     */
    public static void listening(Environment environment, String namespace, Object webServer, int port) {
        if ("management".equals(namespace)) {
            log.info("square-rest-service health and metrics under http://localhost:{}/actuator", port);
            return;
        }
        SquareServer server = SquareServer.of(environment);
        boolean tls = environment.containsProperty("server.ssl.bundle")
                && environment.getProperty("server.ssl.enabled", Boolean.class, true);
        String clientAuth = environment.getProperty("server.ssl.client-auth", "none");
        String scheme = tls ? "https" : "http";
        log.info(
                "square-rest-service listening on {} ({}): GET (and POST with a payload) {}://localhost:{}/rest/square/unary/{number}"
                        + " ({}), health and metrics under {}://localhost:{}/actuator unless management.server.port"
                        + " says otherwise",
                server,
                webServer.getClass().getSimpleName(),
                scheme,
                port,
                !tls
                        ? "HTTP/1.1, or HTTP/2 cleartext with prior knowledge"
                        : "TLS, HTTP/1.1 or HTTP/2 by ALPN"
                                + ("need".equalsIgnoreCase(clientAuth) ? ", a client certificate required" : ""),
                scheme,
                port);
    }
}
