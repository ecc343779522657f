package io.github.squarelab.square.rest;

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
     * As many as the aggregator's rest/h2c client opens to one replica. Not more: each open stream holds
     * tens of kilobytes, and 2 connections of 1000 streams ran a 128 MiB heap out of memory. And fewer than
     * Tomcat's 200 threads: they also parse the connection's frames, so streams blocked reading their request
     * bodies must leave some free to parse those bodies (at 200 a connection, POSTs with a payload stalled every
     * thread until the 20 s stream read timeout).
     */
    static final int MAX_STREAMS = 160;

    /**
     * How much of a request body a stream may be sent before the service reads it (HTTP/2's
     * SETTINGS_INITIAL_WINDOW_SIZE). Tomcat gives every stream that carries a body two buffers of this size, so at
     * the default 64 KiB the aggregator's 4 x 200 POST streams of rest/h2c with a payload took about 100 MB: with 100
     * aggregator requests at once the 128 MiB service's old generation stayed full, collection after collection.
     * 16 KiB: the largest payload (a collection for a 10-digit number, about 8.3 KB) still comes in one window.
     */
    static final int STREAM_WINDOW_BYTES = 16 * 1024;

    @Override
    public void customize(TomcatServletWebServerFactory factory) {
        factory.addConnectorCustomizers(connector -> {
            for (UpgradeProtocol protocol : connector.findUpgradeProtocols()) {
                if (protocol instanceof Http2Protocol http2) {
                    http2.setMaxConcurrentStreams(MAX_STREAMS);
                    http2.setMaxConcurrentStreamExecution(MAX_STREAMS);
                    http2.setInitialWindowSize(STREAM_WINDOW_BYTES);
                }
            }
        });
    }
}
