package io.github.squarelab.aggregator.rest;

import io.github.squarelab.aggregator.AggregatorProperties;
import io.netty.channel.ChannelOption;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionProvider;

/** The REST client and one connection pool per replica, sized and timed by {@code aggregator.*}. */
@Configuration(proxyBeanMethods = false)
class RestClientConfiguration {

    /** Connecting on loopback or a LAN takes microseconds; a refused or black-holed port must not hang a call. */
    private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(2);

    @Bean(destroyMethod = "dispose")
    RestReplicas squareRestReplicas(AggregatorProperties properties) {
        List<URI> baseUrls = properties.rest().baseUrl();
        List<RestReplicas.Replica> replicas = new ArrayList<>(baseUrls.size());
        for (int i = 0; i < baseUrls.size(); i++) {
            String baseUrl = baseUrls.get(i).toString();
            ConnectionProvider connections =
                    connections(baseUrls.size() == 1 ? "square-rest" : "square-rest-" + (i + 1), properties);
            HttpClient http = HttpClient.create(connections)
                    .baseUrl(baseUrl)
                    .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) CONNECT_TIMEOUT.toMillis())
                    .responseTimeout(properties.callDeadline());
            replicas.add(new RestReplicas.Replica(baseUrl, connections, http));
        }
        // Load the event loops, native transport and resolver now, not on the first request's clock.
        replicas.get(0).http().warmup().block();
        return new RestReplicas(replicas);
    }

    @Bean
    RestSquareClient restSquareClient(RestReplicas squareRestReplicas, AggregatorProperties properties) {
        return new RestSquareClient(squareRestReplicas, properties.callDeadline());
    }

    private static ConnectionProvider connections(String name, AggregatorProperties properties) {
        return ConnectionProvider.builder(name)
                .maxConnections(properties.rest().maxConnections())
                // Waiting calls are bounded by (concurrent requests x aggregator.in-flight), so the queue
                // needs no limit of its own; each waits at most one call deadline.
                .pendingAcquireMaxCount(-1)
                .pendingAcquireTimeout(properties.callDeadline())
                .maxIdleTime(Duration.ofSeconds(30))
                .build();
    }
}
