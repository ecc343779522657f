package io.github.squarelab.square.rest;

import io.github.squarelab.payload.H2cStreams;
import org.eclipse.jetty.http2.server.AbstractHTTP2ServerConnectionFactory;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.SslConnectionFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication.Type;
import org.springframework.boot.autoconfigure.reactor.netty.ReactorNettyConfigurations;
import org.springframework.boot.web.embedded.jetty.JettyServerCustomizer;
import org.springframework.boot.web.embedded.jetty.JettyServletWebServerFactory;
import org.springframework.boot.web.embedded.netty.NettyReactiveWebServerFactory;
import org.springframework.boot.web.embedded.netty.NettyRouteProvider;
import org.springframework.boot.web.embedded.netty.NettyServerCustomizer;
import org.springframework.boot.web.embedded.tomcat.TomcatServletWebServerFactory;
import org.springframework.boot.web.server.WebServerFactoryCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.core.Ordered;
import org.springframework.http.client.ReactorResourceFactory;
import reactor.netty.http.Http2SettingsSpec;

/**
 * The server factory for square.server=jetty or netty, defined as Boot's own auto-configuration would: Boot picks
 * Tomcat whenever Tomcat is on the classpath (for reactive applications too), and backs off when a factory is
 * defined. Tomcat (the default) needs nothing here. Each server gets {@link Http2Streams}' HTTP/2 limits.
 */
@Configuration(proxyBeanMethods = false)
class WebServers {

    /** As Boot's ServletWebServerFactoryConfiguration.EmbeddedJetty. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnWebApplication(type = Type.SERVLET)
    @ConditionalOnProperty(name = SquareServer.PROPERTY, havingValue = "jetty")
    static class Jetty {

        @Bean
        JettyServletWebServerFactory jettyServletWebServerFactory(ObjectProvider<JettyServerCustomizer> customizers) {
            JettyServletWebServerFactory factory = new JettyServletWebServerFactory();
            factory.getServerCustomizers().addAll(customizers.orderedStream().toList());
            return factory;
        }

        /** Boot adds the HTTP/2 connection factory (server.http2.enabled: h2c, or h2 by ALPN with TLS); its limits. */
        @Bean
        JettyServerCustomizer jettyHttp2Streams() {
            return server -> {
                for (Connector connector : server.getConnectors()) {
                    for (var factory : connector.getConnectionFactories()) {
                        if (factory instanceof AbstractHTTP2ServerConnectionFactory http2) {
                            http2.setMaxConcurrentStreams(H2cStreams.PER_REPLICA);
                            http2.setInitialStreamRecvWindow(Http2Streams.STREAM_WINDOW_BYTES);
                        }
                    }
                }
            };
        }

        /** Boot adds the SSL connection factory with server.ssl: each refused handshake in one line. */
        @Bean
        JettyServerCustomizer jettyTlsRefusalLog() {
            return server -> {
                for (Connector connector : server.getConnectors()) {
                    for (var factory : connector.getConnectionFactories()) {
                        if (factory instanceof SslConnectionFactory ssl) {
                            ssl.addBean(new TlsRefusalLog.OnJetty());
                        }
                    }
                }
            };
        }
    }

    /** Tomcat is Boot's own (square.server=tomcat): only its refused handshakes are logged here, in one line. */
    @Bean
    WebServerFactoryCustomizer<TomcatServletWebServerFactory> tomcatTlsRefusalLog() {
        return factory -> TlsRefusalLog.OnTomcat.install();
    }

    /** As Boot's ReactiveWebServerFactoryConfiguration.EmbeddedNetty. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnWebApplication(type = Type.REACTIVE)
    @ConditionalOnProperty(name = SquareServer.PROPERTY, havingValue = "netty")
    @Import(ReactorNettyConfigurations.ReactorResourceFactoryConfiguration.class)
    static class Netty {

        @Bean
        NettyReactiveWebServerFactory nettyReactiveWebServerFactory(
                ReactorResourceFactory resourceFactory,
                ObjectProvider<NettyRouteProvider> routes,
                ObjectProvider<NettyServerCustomizer> customizers) {
            NettyReactiveWebServerFactory factory = new NettyReactiveWebServerFactory();
            factory.setResourceFactory(resourceFactory);
            routes.orderedStream().forEach(factory::addRouteProviders);
            factory.getServerCustomizers().addAll(customizers.orderedStream().toList());
            return factory;
        }

        @Bean
        NettyHttp2Streams nettyHttp2Streams() {
            return new NettyHttp2Streams();
        }

        @Bean
        TlsRefusalLog.OnNetty tlsRefusalLog() {
            return new TlsRefusalLog.OnNetty();
        }
    }

    /**
     * Last of the factory's customizers: Reactor Netty replaces the HTTP/2 settings as a whole, and Boot's own customizer
     * sets them too (the header list size, from server.max-http-request-header-size), which is kept.
     */
    static class NettyHttp2Streams implements WebServerFactoryCustomizer<NettyReactiveWebServerFactory>, Ordered {

        @Override
        public void customize(NettyReactiveWebServerFactory factory) {
            factory.addServerCustomizers(server -> {
                Http2SettingsSpec before = server.configuration().http2SettingsSpec();
                return server.http2Settings(settings -> {
                    if (before != null && before.maxHeaderListSize() != null) {
                        settings.maxHeaderListSize(before.maxHeaderListSize());
                    }
                    settings.maxConcurrentStreams(H2cStreams.PER_REPLICA)
                            .initialWindowSize(Http2Streams.STREAM_WINDOW_BYTES);
                });
            });
        }

        @Override
        public int getOrder() {
            return Ordered.LOWEST_PRECEDENCE;
        }
    }
}
