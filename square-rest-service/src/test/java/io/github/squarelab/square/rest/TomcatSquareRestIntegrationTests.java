package io.github.squarelab.square.rest;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.web.embedded.tomcat.TomcatWebServer;
import org.springframework.boot.web.server.WebServer;

@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT, properties = "square.server=tomcat")
class TomcatSquareRestIntegrationTests extends SquareRestIntegrationTests {

    @Override
    Class<? extends WebServer> webServer() {
        return TomcatWebServer.class;
    }
}
