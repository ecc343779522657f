package io.github.squarelab.square.rest;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.web.embedded.jetty.JettyWebServer;
import org.springframework.boot.web.server.WebServer;

@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT, properties = "square.server=jetty")
class JettySquareRestIntegrationTests extends SquareRestIntegrationTests {

    @Override
    Class<? extends WebServer> webServer() {
        return JettyWebServer.class;
    }
}
