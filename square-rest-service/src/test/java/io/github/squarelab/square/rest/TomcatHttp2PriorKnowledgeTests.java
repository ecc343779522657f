package io.github.squarelab.square.rest;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.squarelab.payload.Shape;
import org.apache.catalina.connector.Connector;
import org.apache.coyote.AbstractProtocol;
import org.apache.coyote.UpgradeProtocol;
import org.apache.coyote.http2.Http2Protocol;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.web.context.WebServerApplicationContext;
import org.springframework.boot.web.embedded.tomcat.TomcatWebServer;

/** On Tomcat, square.server's default; and how Tomcat runs a connection's streams, which only Tomcat shows. */
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT, properties = "square.server=tomcat")
class TomcatHttp2PriorKnowledgeTests extends Http2PriorKnowledgeTests {

    @Autowired
    private WebServerApplicationContext context;

    @Test
    void oneConnectionCarriesAsManyCallsAsTheAggregatorPutsOnIt() {
        Connector connector = ((TomcatWebServer) context.getWebServer())
                .getTomcat()
                .getService()
                .findConnectors()[0];
        Http2Protocol http2 = null;
        for (UpgradeProtocol protocol : connector.findUpgradeProtocols()) {
            if (protocol instanceof Http2Protocol found) {
                http2 = found;
            }
        }

        assertThat(http2).isNotNull();
        assertThat(http2.getMaxConcurrentStreams()).isEqualTo(160);
        assertThat(http2.getMaxConcurrentStreamExecution()).isEqualTo(160);
        // Tomcat reads a connection's frames, request bodies included, on the threads that run its streams.
        assertThat(http2.getMaxConcurrentStreamExecution())
                .as("streams one connection may run, below Tomcat's threads")
                .isLessThan(((AbstractProtocol<?>) connector.getProtocolHandler()).getMaxThreads());
        // Tomcat gives every stream with a body two buffers of the window's size: at the default 64 KiB the
        // aggregator's 4 x 200 POST streams (before its 160-call cap) took about 100 MB of the 128 MiB heap. The
        // largest payload still fits.
        int largestPayload =
                SquareEchoRoutesTests.json(Shape.COLLECTION, Integer.MIN_VALUE).length();
        assertThat(http2.getInitialWindowSize()).isBetween(largestPayload, 16 * 1024);
    }
}
