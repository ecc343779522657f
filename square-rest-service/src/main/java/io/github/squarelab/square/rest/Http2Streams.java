package io.github.squarelab.square.rest;

import org.apache.coyote.UpgradeProtocol;
import org.apache.coyote.http2.Http2Protocol;
import org.springframework.boot.web.embedded.tomcat.TomcatServletWebServerFactory;
import org.springframework.boot.web.server.WebServerFactoryCustomizer;
import org.springframework.stereotype.Component;

/**
 * HTTP/2 cleartext (server.http2.enabled) lets the aggregator multiplex its whole window of calls on a few
 * connections; Tomcat's defaults (100 streams a connection, 20 of them executing) would queue most of them.
 */
@Component
class Http2Streams implements WebServerFactoryCustomizer<TomcatServletWebServerFactory> {

    /** As many as the aggregator's rest/h2c client opens on one connection. */
    static final int MAX_STREAMS = 1000;

    @Override
    public void customize(TomcatServletWebServerFactory factory) {
        factory.addConnectorCustomizers(connector -> {
            for (UpgradeProtocol protocol : connector.findUpgradeProtocols()) {
                if (protocol instanceof Http2Protocol http2) {
                    http2.setMaxConcurrentStreams(MAX_STREAMS);
                    http2.setMaxConcurrentStreamExecution(MAX_STREAMS);
                }
            }
        });
    }
}
