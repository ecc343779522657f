package io.github.squarelab.square.rest;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.web.context.WebServerInitializedEvent;
import org.springframework.context.event.EventListener;
import org.springframework.core.env.Environment;
import org.springframework.stereotype.Component;

/** One line that says where to reach the service, with the port actually bound and whether it speaks TLS. */
@Component
class StartupLog {

    private static final Logger log = LoggerFactory.getLogger(StartupLog.class);

    @EventListener
    void onWebServerStarted(WebServerInitializedEvent event) {
        int port = event.getWebServer().getPort();
        if ("management".equals(event.getApplicationContext().getServerNamespace())) {
            log.info("square-rest-service health and metrics under http://localhost:{}/actuator", port);
            return;
        }
        Environment environment = event.getApplicationContext().getEnvironment();
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
                event.getWebServer().getClass().getSimpleName(),
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
