package io.github.squarelab.aggregator.rest;

import io.github.squarelab.aggregator.AggregatorProperties;
import io.github.squarelab.aggregator.fanout.Transport;
import io.github.squarelab.aggregator.netty.ClientEventLoops;
import io.github.squarelab.aggregator.tls.ClientTls;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The REST clients, sized and timed by {@code aggregator.*}: over HTTP/1.1, one pool of keep-alive
 * connections per replica, one call on a connection at a time; over HTTP/2 (cleartext with prior knowledge, or h2 by
 * ALPN under TLS),
 * a few connections per replica, each carrying many calls at once. Each path calls through the HTTP client
 * {@code aggregator.rest.client} or {@code aggregator.rest.h2c-client} names (RestConnector).
 */
@Configuration(proxyBeanMethods = false)
class RestClientConfiguration {

    @Bean(destroyMethod = "dispose")
    RestReplicas squareRestReplicas(
            AggregatorProperties properties, ClientEventLoops clientEventLoops, ClientTls clientTls) {
        RestConnector connector =
                RestConnector.of("aggregator.rest.client", properties.rest().client());
        return replicas(properties, clientEventLoops, clientTls, "square-rest", connector, false);
    }

    @Bean(destroyMethod = "dispose")
    RestReplicas squareRestH2cReplicas(
            AggregatorProperties properties, ClientEventLoops clientEventLoops, ClientTls clientTls) {
        RestConnector connector =
                RestConnector.of("aggregator.rest.h2c-client", properties.rest().h2cClient());
        return replicas(properties, clientEventLoops, clientTls, "square-rest-h2c", connector, true);
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
            ClientTls tls,
            String name,
            RestConnector connector,
            boolean h2c) {
        List<URI> baseUrls = properties.rest().baseUrl();
        List<RestReplicas.Replica> replicas = new ArrayList<>(baseUrls.size());
        try {
            for (int i = 0; i < baseUrls.size(); i++) {
                String baseUrl = baseUrls.get(i).toString();
                String replicaName = baseUrls.size() == 1 ? name : name + "-" + (i + 1);
                replicas.add(new RestReplicas.Replica(
                        baseUrl, RestConnectors.create(connector, h2c, replicaName, baseUrl, properties, loops, tls)));
            }
        } catch (RuntimeException e) {
            replicas.forEach(replica -> replica.exchange().close());
            throw e;
        }
        return new RestReplicas(replicas);
    }
}
