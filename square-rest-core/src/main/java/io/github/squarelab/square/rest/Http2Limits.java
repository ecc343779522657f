package io.github.squarelab.square.rest;

import io.github.squarelab.payload.H2cStreams;
import org.apache.catalina.connector.Connector;
import org.apache.coyote.UpgradeProtocol;
import org.apache.coyote.http2.Http2Protocol;
import org.eclipse.jetty.http2.server.AbstractHTTP2ServerConnectionFactory;
import org.eclipse.jetty.server.SslConnectionFactory;
import reactor.netty.http.Http2SettingsSpec;
import reactor.netty.http.server.HttpServer;

/**
 * HTTP/2 cleartext (server.http2.enabled) lets the aggregator multiplex its window of calls on a few connections; each
 * server's defaults (Tomcat's 100 streams a connection, only 20 of them executing) would queue most. The same limits on
 * Tomcat, Jetty and Reactor Netty, applied by each Spring generation's WebServers, which hands them to that
 * generation's server factories.
 */
public final class Http2Limits {

    /**
     * A stream's request-body window: Tomcat holds two buffers of it per stream, and the largest payload still fits
     * (docs/performance.md, "The REST service's stream window").
     */
    public static final int STREAM_WINDOW_BYTES = 16 * 1024;

    private Http2Limits() {}

    public static void onTomcat(Connector connector) {
        for (UpgradeProtocol protocol : connector.findUpgradeProtocols()) {
            if (protocol instanceof Http2Protocol http2) {
                http2.setMaxConcurrentStreams(H2cStreams.PER_REPLICA);
                http2.setMaxConcurrentStreamExecution(H2cStreams.PER_REPLICA);
                http2.setInitialWindowSize(STREAM_WINDOW_BYTES);
            }
        }
    }

    /** Boot adds the HTTP/2 connection factory (server.http2.enabled: h2c, or h2 by ALPN with TLS); its limits. */
    public static void onJetty(org.eclipse.jetty.server.Server server) {
        for (var connector : server.getConnectors()) {
            for (var factory : connector.getConnectionFactories()) {
                if (factory instanceof AbstractHTTP2ServerConnectionFactory http2) {
                    http2.setMaxConcurrentStreams(H2cStreams.PER_REPLICA);
                    http2.setInitialStreamRecvWindow(STREAM_WINDOW_BYTES);
                }
            }
        }
    }

    /** Boot adds the SSL connection factory with server.ssl: each refused handshake in one line. */
    public static void tlsRefusalLogOnJetty(org.eclipse.jetty.server.Server server) {
        for (var connector : server.getConnectors()) {
            for (var factory : connector.getConnectionFactories()) {
                if (factory instanceof SslConnectionFactory ssl) {
                    ssl.addBean(new TlsRefusalLog.OnJetty());
                }
            }
        }
    }

    /**
     * Reactor Netty replaces the HTTP/2 settings as a whole, and Boot's own customizer sets them too (the header list
     * size, from server.max-http-request-header-size), which is kept: so this runs last.
     */
    public static HttpServer onNetty(HttpServer server) {
        Http2SettingsSpec before = server.configuration().http2SettingsSpec();
        return server.http2Settings(settings -> {
            if (before != null && before.maxHeaderListSize() != null) {
                settings.maxHeaderListSize(before.maxHeaderListSize());
            }
            settings.maxConcurrentStreams(H2cStreams.PER_REPLICA).initialWindowSize(STREAM_WINDOW_BYTES);
        });
    }
}
