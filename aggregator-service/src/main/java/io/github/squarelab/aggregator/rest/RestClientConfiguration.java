package io.github.squarelab.aggregator.rest;

import io.github.squarelab.aggregator.AggregatorProperties;
import io.netty.channel.ChannelOption;
import java.time.Duration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionProvider;

/** The REST client and its connection pool, sized and timed by {@code aggregator.*}. */
@Configuration(proxyBeanMethods = false)
class RestClientConfiguration {

    /** Connecting on loopback or a LAN takes microseconds; a refused or black-holed port must not hang a call. */
    private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(2);

    @Bean(destroyMethod = "dispose")
    ConnectionProvider squareRestConnections(AggregatorProperties properties) {
        return ConnectionProvider.builder("square-rest")
            .maxConnections(properties.rest().maxConnections())
            // Waiting calls are bounded by (concurrent requests x aggregator.in-flight), so the queue
            // needs no limit of its own; each waits at most one call deadline.
            .pendingAcquireMaxCount(-1)
            .pendingAcquireTimeout(properties.callDeadline())
            .maxIdleTime(Duration.ofSeconds(30))
            .build();
    }

    @Bean
    RestSquareClient restSquareClient(ConnectionProvider squareRestConnections, AggregatorProperties properties) {
        String baseUrl = properties.rest().baseUrl().toString();
        HttpClient http = HttpClient.create(squareRestConnections)
            .baseUrl(baseUrl)
            .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) CONNECT_TIMEOUT.toMillis())
            .responseTimeout(properties.callDeadline());
        // Load the event loops, native transport and resolver now, not on the first request's clock.
        http.warmup().block();
        return new RestSquareClient(http, baseUrl, properties.callDeadline());
    }
}
