package io.github.squarelab.square.rest;

import io.github.squarelab.payload.H2cStreams;
import org.apache.coyote.UpgradeProtocol;
import org.apache.coyote.http2.Http2Protocol;
import org.springframework.boot.web.embedded.tomcat.TomcatServletWebServerFactory;
import org.springframework.boot.web.server.WebServerFactoryCustomizer;
import org.springframework.stereotype.Component;

/**
 * HTTP/2 cleartext (server.http2.enabled) lets the aggregator multiplex its window of calls on a few
 * connections; Tomcat's defaults (100 streams a connection, only 20 of them executing) would queue most. The same two
 * limits are given to Jetty and Reactor Netty ({@link WebServers}).
 */
@Component
class Http2Streams implements WebServerFactoryCustomizer<TomcatServletWebServerFactory> {

    /**
     * A stream's request-body window: Tomcat holds two buffers of it per stream, and the largest payload still fits
     * (docs/performance.md, "The REST service's stream window").
     */
    static final int STREAM_WINDOW_BYTES = 16 * 1024;

    @Override
    public void customize(TomcatServletWebServerFactory factory) {
        factory.addConnectorCustomizers(connector -> {
            for (UpgradeProtocol protocol : connector.findUpgradeProtocols()) {
                if (protocol instanceof Http2Protocol http2) {
                    http2.setMaxConcurrentStreams(H2cStreams.PER_REPLICA);
                    http2.setMaxConcurrentStreamExecution(H2cStreams.PER_REPLICA);
                    http2.setInitialWindowSize(STREAM_WINDOW_BYTES);
                }
            }
        });
    }
}
