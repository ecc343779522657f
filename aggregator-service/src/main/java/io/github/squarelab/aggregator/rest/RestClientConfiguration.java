package io.github.squarelab.aggregator.rest;

import io.github.squarelab.aggregator.AggregatorProperties;
import io.github.squarelab.aggregator.fanout.Transport;
import io.github.squarelab.aggregator.netty.ClientEventLoops;
import io.netty.channel.ChannelOption;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import reactor.netty.http.HttpProtocol;
import reactor.netty.http.client.Http2AllocationStrategy;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionProvider;

/**
 * The REST clients, sized and timed by {@code aggregator.*}: over HTTP/1.1, one pool of keep-alive
 * connections per replica, one call on a connection at a time; over HTTP/2 cleartext (prior knowledge),
 * a few connections per replica, each carrying many calls at once.
 */
@Configuration(proxyBeanMethods = false)
class RestClientConfiguration {

    /** Connecting on loopback or a LAN takes microseconds; a refused or black-holed port must not hang a call. */
    private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(2);

    /**
     * The HTTP/2 receive window a rest/h2c connection advertises, per stream; Netty grows the connection's window
     * to twice this. The default, 64 KiB for the whole connection, holds about 12 answers with a payload, so
     * Tomcat's answers kept waiting for it; and Tomcat 10.1.55 loses window credit when it shares out a
     * WINDOW_UPDATE among answers that wait (apache/tomcat#1032): answers then waited for credit the client had
     * already sent until Tomcat's 5 s write timeout reset them. 1 MiB a stream outgrows every answer in flight on
     * a connection (at most 160 of 5.4 KB), so Tomcat never has to wait for window, and it costs nothing until
     * an answer is left unread.
     */
    private static final int H2C_WINDOW_BYTES = 1 << 20;

    @Bean(destroyMethod = "dispose")
    RestReplicas squareRestReplicas(AggregatorProperties properties, ClientEventLoops clientEventLoops) {
        return replicas(
                properties, clientEventLoops, "square-rest", name -> http1Pool(name, properties), HttpProtocol.HTTP11);
    }

    @Bean(destroyMethod = "dispose")
    RestReplicas squareRestH2cReplicas(AggregatorProperties properties, ClientEventLoops clientEventLoops) {
        return replicas(
                properties, clientEventLoops, "square-rest-h2c", name -> h2cPool(name, properties), HttpProtocol.H2C);
    }

    @Bean
    RestSquareClient restSquareClient(RestReplicas squareRestReplicas, AggregatorProperties properties) {
        return new RestSquareClient(Transport.REST_UNARY, squareRestReplicas, properties.callDeadline());
    }

    @Bean
    RestSquareClient restH2cSquareClient(RestReplicas squareRestH2cReplicas, AggregatorProperties properties) {
        return new RestSquareClient(Transport.REST_H2C, squareRestH2cReplicas, properties.callDeadline());
    }

    private static RestReplicas replicas(
            AggregatorProperties properties,
            ClientEventLoops loops,
            String name,
            Function<String, ConnectionProvider> pool,
            HttpProtocol protocol) {
        List<URI> baseUrls = properties.rest().baseUrl();
        List<RestReplicas.Replica> replicas = new ArrayList<>(baseUrls.size());
        for (int i = 0; i < baseUrls.size(); i++) {
            String baseUrl = baseUrls.get(i).toString();
            ConnectionProvider connections = pool.apply(baseUrls.size() == 1 ? name : name + "-" + (i + 1));
            HttpClient http = HttpClient.create(connections)
                    // The event loops and allocator the gRPC channel shares (ClientEventLoops).
                    .runOn(loops.loops())
                    .option(ChannelOption.ALLOCATOR, loops.allocator())
                    .protocol(protocol)
                    .http2Settings(settings -> settings.initialWindowSize(H2C_WINDOW_BYTES))
                    .baseUrl(baseUrl)
                    .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) CONNECT_TIMEOUT.toMillis())
                    .responseTimeout(properties.callDeadline());
            replicas.add(new RestReplicas.Replica(baseUrl, connections, http));
        }
        // Load the event loops, native transport and resolver now, not on the first request's clock.
        replicas.get(0).http().warmup().block();
        return new RestReplicas(replicas);
    }

    private static ConnectionProvider http1Pool(String name, AggregatorProperties properties) {
        return pool(name, properties)
                .maxConnections(properties.rest().maxConnections())
                .build();
    }

    private static ConnectionProvider h2cPool(String name, AggregatorProperties properties) {
        int connections = properties.rest().h2cConnections();
        return pool(name, properties)
                .maxConnections(connections)
                .allocationStrategy(Http2AllocationStrategy.builder()
                        .minConnections(1)
                        .maxConnections(connections)
                        .maxConcurrentStreams(properties.rest().h2cMaxStreams())
                        .build())
                .build();
    }

    private static ConnectionProvider.Builder pool(String name, AggregatorProperties properties) {
        return ConnectionProvider.builder(name)
                // Waiting calls are bounded by (concurrent requests x aggregator.in-flight), so the queue
                // needs no limit of its own; each waits at most one call deadline.
                .pendingAcquireMaxCount(-1)
                .pendingAcquireTimeout(properties.callDeadline())
                .maxIdleTime(Duration.ofSeconds(30));
    }
}
