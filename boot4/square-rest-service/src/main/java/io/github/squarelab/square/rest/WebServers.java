package io.github.squarelab.square.rest;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication.Type;
import org.springframework.boot.jetty.JettyServerCustomizer;
import org.springframework.boot.jetty.servlet.JettyServletWebServerFactory;
import org.springframework.boot.reactor.netty.NettyReactiveWebServerFactory;
import org.springframework.boot.reactor.netty.NettyRouteProvider;
import org.springframework.boot.reactor.netty.NettyServerCustomizer;
import org.springframework.boot.reactor.netty.autoconfigure.ReactorNettyConfigurations;
import org.springframework.boot.tomcat.servlet.TomcatServletWebServerFactory;
import org.springframework.boot.web.server.WebServerFactoryCustomizer;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.boot.web.server.context.WebServerInitializedEvent;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.context.event.EventListener;
import org.springframework.core.Ordered;
import org.springframework.core.env.Environment;
import org.springframework.http.client.ReactorResourceFactory;

/**
 * Spring Boot 4.1's wiring of the REST square service's web servers (square-rest-service has 3.5's: Boot 4 moved every
 * server factory to a module and package of its own, and the server events to web.server.context): the server factory
 * for square.server=jetty or netty, defined as Boot's own auto-configuration would (Boot picks Tomcat whenever Tomcat is on the classpath, for reactive applications too, and
 * backs off when a factory is defined); each server's {@link Http2Limits} and one-line TLS refusals; what
 * /actuator/info and the start-up line say of the server.
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

        @Bean
        JettyServerCustomizer jettyHttp2Streams() {
            return Http2Limits::onJetty;
        }

        @Bean
        JettyServerCustomizer jettyTlsRefusalLog() {
            return Http2Limits::tlsRefusalLogOnJetty;
        }
    }

    /** Tomcat is Boot's own (square.server=tomcat): its HTTP/2 limits, and its refused handshakes in one line. */
    @Bean
    WebServerFactoryCustomizer<TomcatServletWebServerFactory> tomcatHttp2AndTlsRefusalLog() {
        return factory -> {
            factory.addConnectorCustomizers(Http2Limits::onTomcat);
            TlsRefusalLog.OnTomcat.install();
        };
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

        /** Last of the factory's customizers ({@link Http2Limits#onNetty}). */
        @Bean
        NettyHttp2Streams nettyHttp2Streams() {
            return new NettyHttp2Streams();
        }

        @Bean
        NettyServerCustomizer tlsRefusalLog() {
            return TlsRefusalLog.OnNetty::apply;
        }
    }

    static class NettyHttp2Streams implements WebServerFactoryCustomizer<NettyReactiveWebServerFactory>, Ordered {

        @Override
        public void customize(NettyReactiveWebServerFactory factory) {
            factory.addServerCustomizers(Http2Limits::onNetty);
        }

        @Override
        public int getOrder() {
            return Ordered.LOWEST_PRECEDENCE;
        }
    }

    @Bean
    ServerInfo serverInfo(WebServerApplicationContext context, Environment environment) {
        return new ServerInfo(context::getWebServer, environment);
    }

    @EventListener
    void onWebServerStarted(WebServerInitializedEvent event) {
        StartupLog.listening(
                event.getApplicationContext().getEnvironment(),
                event.getApplicationContext().getServerNamespace(),
                event.getWebServer(),
                event.getWebServer().getPort());
    }
}
