package io.github.squarelab.square.rest;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.web.context.WebServerInitializedEvent;
import org.springframework.context.event.EventListener;
import org.springframework.stereotype.Component;

/** One line that says where to reach the service, with the port actually bound. */
@Component
class StartupLog {

    private static final Logger log = LoggerFactory.getLogger(StartupLog.class);

    @EventListener
    void onWebServerStarted(WebServerInitializedEvent event) {
        int port = event.getWebServer().getPort();
        SquareServer server = SquareServer.of(event.getApplicationContext().getEnvironment());
        log.info(
                "square-rest-service listening on {} ({}): GET (and POST with a payload) http://localhost:{}/rest/square/unary/{number}"
                        + " (HTTP/1.1, or HTTP/2 cleartext with prior knowledge), "
                        + "health and metrics under http://localhost:{}/actuator",
                server,
                event.getWebServer().getClass().getSimpleName(),
                port,
                port);
    }
}
