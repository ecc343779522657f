package io.github.squarelab.aggregator.rest;

import io.github.squarelab.aggregator.AggregatorProperties;
import io.github.squarelab.aggregator.netty.ClientEventLoops;
import io.github.squarelab.aggregator.tls.ClientTls;
import io.github.squarelab.payload.H2cStreams;
import io.netty.channel.ChannelOption;
import io.netty.handler.ssl.SslContextBuilder;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.apache.hc.client5.http.config.ConnectionConfig;
import org.apache.hc.client5.http.config.RequestConfig;
import org.apache.hc.client5.http.config.TlsConfig;
import org.apache.hc.client5.http.impl.async.CloseableHttpAsyncClient;
import org.apache.hc.client5.http.impl.async.H2AsyncClientBuilder;
import org.apache.hc.client5.http.impl.async.HttpAsyncClients;
import org.apache.hc.client5.http.impl.nio.PoolingAsyncClientConnectionManagerBuilder;
import org.apache.hc.client5.http.ssl.ClientTlsStrategyBuilder;
import org.apache.hc.core5.http.nio.ssl.TlsStrategy;
import org.apache.hc.core5.http2.HttpVersionPolicy;
import org.apache.hc.core5.http2.config.H2Config;
import org.apache.hc.core5.io.CloseMode;
import org.apache.hc.core5.reactor.IOReactorConfig;
import org.apache.hc.core5.util.Timeout;
import org.eclipse.jetty.client.Connection;
import org.eclipse.jetty.client.ConnectionPool;
import org.eclipse.jetty.client.HttpClientTransport;
import org.eclipse.jetty.client.MultiplexConnectionPool;
import org.eclipse.jetty.client.transport.HttpClientTransportOverHTTP;
import org.eclipse.jetty.http2.client.HTTP2Client;
import org.eclipse.jetty.http2.client.transport.HttpClientTransportOverHTTP2;
import org.eclipse.jetty.io.ClientConnector;
import org.eclipse.jetty.util.ConcurrentPool;
import org.eclipse.jetty.util.ssl.SslContextFactory;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.eclipse.jetty.util.thread.ScheduledExecutorScheduler;
import org.springframework.http.HttpMethod;
import org.springframework.http.client.reactive.ClientHttpConnector;
import org.springframework.http.client.reactive.ClientHttpRequest;
import org.springframework.http.client.reactive.ClientHttpResponse;
import org.springframework.http.client.reactive.HttpComponentsClientHttpConnector;
import org.springframework.http.client.reactive.JdkClientHttpConnector;
import org.springframework.http.client.reactive.JettyClientHttpConnector;
import org.springframework.http.client.reactive.ReactorClientHttpConnector;
import reactor.core.publisher.Mono;
import reactor.netty.http.Http11SslContextSpec;
import reactor.netty.http.Http2SslContextSpec;
import reactor.netty.http.HttpProtocol;
import reactor.netty.http.client.Http2AllocationStrategy;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionProvider;

/**
 * One replica's client for each {@link RestConnector}, over HTTP/1.1 (rest/unary: at most
 * {@code aggregator.rest.max-connections} connections) or HTTP/2 (rest/h2c: cleartext with prior knowledge, or h2 by
 * ALPN under {@link ClientTls}; at most
 * {@code aggregator.rest.h2c-connections} connections sharing {@link H2cStreams#PER_REPLICA}
 * calls at once). Every one connects within 2 s and bounds a call by {@code aggregator.call-deadline}.
 */
final class RestConnectors {

    /** Connecting on loopback or a LAN takes microseconds; a refused or black-holed port must not hang a call. */
    static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(2);

    /**
     * The per-stream receive window of a rest/h2c connection: larger than every answer in flight on it, so that Tomcat
     * never waits for window (docs/performance.md, "The aggregator's h2c receive window").
     */
    static final int H2C_WINDOW_BYTES = 1 << 20;

    /** Idle pooled connections are closed after this. */
    private static final Duration MAX_IDLE = Duration.ofSeconds(30);

    /** Threads of the clients that bring their own, per replica: a few, the aggregator shares 2 cores. */
    private static final int THREADS = Math.max(2, Runtime.getRuntime().availableProcessors());

    private RestConnectors() {}

    /**
     * @param name the client's name, for its pool and threads
     * @param h2c HTTP/2 (rest/h2c), else HTTP/1.1 (rest/unary)
     * @param tls plaintext, or the TLS every client here speaks the same way
     */
    static RestExchange create(
            RestConnector connector,
            boolean h2c,
            String name,
            String baseUrl,
            AggregatorProperties properties,
            ClientEventLoops loops,
            ClientTls tls) {
        return switch (connector) {
            case REACTOR_NETTY -> {
                ConnectionProvider pool = reactorPool(name, h2c, properties);
                yield new ReactorNettyExchange(reactorClient(pool, h2c, baseUrl, properties, loops, tls), pool);
            }
            case WEBCLIENT -> {
                ConnectionProvider pool = reactorPool(name, h2c, properties);
                // The pool and the response timeout bound a call, and the body is written once a connection is had.
                yield new WebClientExchange(
                        baseUrl,
                        new ReactorClientHttpConnector(reactorClient(pool, h2c, baseUrl, properties, loops, tls)),
                        null,
                        null,
                        pool::dispose);
            }
            case JETTY -> jetty(name, h2c, baseUrl, properties, tls);
            case APACHE -> apache(name, h2c, baseUrl, properties, tls);
            case JDK -> {
                if (h2c) {
                    throw new IllegalArgumentException("aggregator.rest.h2c-client cannot be jdk: java.net.http's"
                            + " client has no HTTP/2 cleartext with prior knowledge");
                }
                yield jdk(name, baseUrl, properties, tls);
            }
        };
    }

    /** Reactor Netty's client bound to one replica and its pool, on the event loops the gRPC channel shares. */
    private static HttpClient reactorClient(
            ConnectionProvider pool,
            boolean h2c,
            String baseUrl,
            AggregatorProperties properties,
            ClientEventLoops loops,
            ClientTls tls) {
        HttpClient client = HttpClient.create(pool)
                // The event loops and allocator the gRPC channel shares (ClientEventLoops).
                .runOn(loops.loops())
                .option(ChannelOption.ALLOCATOR, loops.allocator())
                .protocol(h2c ? (tls.enabled() ? HttpProtocol.H2 : HttpProtocol.H2C) : HttpProtocol.HTTP11)
                .http2Settings(settings -> settings.initialWindowSize(H2C_WINDOW_BYTES))
                .baseUrl(baseUrl)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) CONNECT_TIMEOUT.toMillis())
                .responseTimeout(properties.callDeadline());
        if (tls.enabled()) {
            client = client.secure(spec -> spec.sslContext(
                    h2c
                            ? Http2SslContextSpec.forClient().configure(builder -> trust(builder, tls))
                            : Http11SslContextSpec.forClient().configure(builder -> trust(builder, tls))));
        }
        // Load the event loops, native transport and resolver now, not on the first request's clock.
        client.warmup().block();
        return client;
    }

    private static void trust(SslContextBuilder builder, ClientTls tls) {
        builder.trustManager(tls.trustManagerFactory()).keyManager(tls.keyManagerFactory());
    }

    private static ConnectionProvider reactorPool(String name, boolean h2c, AggregatorProperties properties) {
        ConnectionProvider.Builder pool = ConnectionProvider.builder(name)
                // Waiting calls are bounded by (concurrent requests x aggregator.in-flight), so the queue
                // needs no limit of its own; each waits at most one call deadline.
                .pendingAcquireMaxCount(-1)
                .pendingAcquireTimeout(properties.callDeadline())
                .maxIdleTime(MAX_IDLE);
        if (!h2c) {
            return pool.maxConnections(properties.rest().maxConnections()).build();
        }
        int connections = properties.rest().h2cConnections();
        return pool.maxConnections(connections)
                .allocationStrategy(Http2AllocationStrategy.builder()
                        .minConnections(1)
                        .maxConnections(connections)
                        .maxConcurrentStreams(properties.rest().h2cMaxStreams())
                        .build())
                .build();
    }

    /**
     * Jetty 12's client; for h2c its HTTP2Client transport, which speaks HTTP/2 with prior knowledge to http://
     * URLs. Its connection pool caps the streams on each connection at the replica's share.
     */
    private static RestExchange jetty(
            String name, boolean h2c, String baseUrl, AggregatorProperties properties, ClientTls tls) {
        int connections =
                h2c ? properties.rest().h2cConnections() : properties.rest().maxConnections();
        ClientConnector connector = new ClientConnector();
        if (tls.enabled()) {
            SslContextFactory.Client ssl = new SslContextFactory.Client();
            ssl.setSslContext(tls.sslContext());
            connector.setSslContextFactory(ssl);
        }
        HttpClientTransport transport;
        if (h2c) {
            HTTP2Client http2 = new HTTP2Client(connector);
            http2.setInitialStreamRecvWindow(H2C_WINDOW_BYTES);
            http2.setInitialSessionRecvWindow(2 * H2C_WINDOW_BYTES);
            HttpClientTransportOverHTTP2 overHttp2 = new HttpClientTransportOverHTTP2(http2);
            int streams = properties.rest().h2cMaxStreams();
            // The server's SETTINGS_MAX_CONCURRENT_STREAMS, if lower, still applies.
            overHttp2.setConnectionPoolFactory(destination -> new MultiplexConnectionPool(
                    destination,
                    () -> new ConcurrentPool<Connection>(
                            ConcurrentPool.StrategyType.FIRST,
                            connections,
                            connection -> Math.min(streams, maxMultiplex(connection, streams))),
                    streams) {});
            transport = overHttp2;
        } else {
            transport = new HttpClientTransportOverHTTP(connector);
        }
        org.eclipse.jetty.client.HttpClient client = new org.eclipse.jetty.client.HttpClient(transport);
        QueuedThreadPool threads = new QueuedThreadPool(4 * THREADS, 1);
        threads.setName(name + "-jetty");
        threads.setDaemon(true);
        client.setExecutor(threads);
        client.setScheduler(new ScheduledExecutorScheduler(name + "-jetty-scheduler", true));
        client.setMaxConnectionsPerDestination(connections);
        // Calls wait in the CallLimit, not in Jetty's queue, whose default limit would reject them.
        client.setMaxRequestsQueuedPerDestination(Integer.MAX_VALUE);
        client.setConnectTimeout(CONNECT_TIMEOUT.toMillis());
        client.setIdleTimeout(MAX_IDLE.toMillis());
        client.setFollowRedirects(false);
        // No Accept-Encoding: gzip, as the other clients send none.
        client.getContentDecoderFactories().clear();
        try {
            client.start();
        } catch (Exception e) {
            throw new IllegalStateException("could not start Jetty's HTTP client for " + baseUrl, e);
        }
        return new WebClientExchange(
                baseUrl,
                new JettyClientHttpConnector(client),
                limit(h2c, properties),
                properties.callDeadline(),
                client::stop);
    }

    private static int maxMultiplex(Connection connection, int otherwise) {
        return connection instanceof ConnectionPool.MaxMultiplexable multiplexable
                ? multiplexable.getMaxMultiplex()
                : otherwise;
    }

    /**
     * Apache HttpClient 5's async client; for h2c one HTTP/2 client per connection, taken in turn, as it keeps one
     * connection per host, with the CallLimit capping the replica's streams, which it cannot.
     */
    private static RestExchange apache(
            String name, boolean h2c, String baseUrl, AggregatorProperties properties, ClientTls tls) {
        Timeout deadline = Timeout.ofMilliseconds(properties.callDeadline().toMillis());
        ConnectionConfig connection = ConnectionConfig.custom()
                .setConnectTimeout(Timeout.ofMilliseconds(CONNECT_TIMEOUT.toMillis()))
                .build();
        RequestConfig request = RequestConfig.custom()
                .setConnectionRequestTimeout(deadline)
                // A cancelled call does not abort Apache's exchange: this frees its connection or stream.
                .setResponseTimeout(deadline)
                .build();
        List<CloseableHttpAsyncClient> clients = new ArrayList<>();
        if (h2c) {
            for (int i = 1; i <= properties.rest().h2cConnections(); i++) {
                clients.add(H2AsyncClientBuilder.create()
                        .setH2Config(H2Config.custom()
                                .setInitialWindowSize(H2C_WINDOW_BYTES)
                                .setPushEnabled(false)
                                .build())
                        .setTlsStrategy(apacheTls(tls))
                        .setIOReactorConfig(
                                IOReactorConfig.custom().setIoThreadCount(1).build())
                        .setThreadFactory(threadFactory(name + "-apache-" + i))
                        .setDefaultConnectionConfig(connection)
                        .setDefaultRequestConfig(request)
                        .disableAutomaticRetries()
                        .disableRedirectHandling()
                        .disableCookieManagement()
                        .build());
            }
        } else {
            int connections = properties.rest().maxConnections();
            clients.add(HttpAsyncClients.custom()
                    .setConnectionManager(PoolingAsyncClientConnectionManagerBuilder.create()
                            .setMaxConnPerRoute(connections)
                            .setMaxConnTotal(connections)
                            .setDefaultConnectionConfig(connection)
                            .setTlsStrategy(apacheTls(tls))
                            .setDefaultTlsConfig(TlsConfig.custom()
                                    .setVersionPolicy(HttpVersionPolicy.FORCE_HTTP_1)
                                    .build())
                            .build())
                    .setIOReactorConfig(
                            IOReactorConfig.custom().setIoThreadCount(THREADS).build())
                    .setThreadFactory(threadFactory(name + "-apache"))
                    .setDefaultRequestConfig(request)
                    .disableAutomaticRetries()
                    .disableRedirectHandling()
                    .disableCookieManagement()
                    .build());
        }
        // Each connector starts its client.
        List<ClientHttpConnector> connectors = clients.stream()
                .<ClientHttpConnector>map(HttpComponentsClientHttpConnector::new)
                .toList();
        return new WebClientExchange(
                baseUrl,
                connectors.size() == 1 ? connectors.get(0) : new InTurn(connectors),
                limit(h2c, properties),
                properties.callDeadline(),
                () -> {
                    for (CloseableHttpAsyncClient client : clients) {
                        client.close(CloseMode.GRACEFUL);
                    }
                });
    }

    /** The bundle's TLS, or null: Apache's default, unused with http base URLs. */
    private static TlsStrategy apacheTls(ClientTls tls) {
        return tls.enabled()
                ? ClientTlsStrategyBuilder.create()
                        .setSslContext(tls.sslContext())
                        .buildAsync()
                : null;
    }

    /** Calls spread over several connectors, one after another. */
    private static final class InTurn implements ClientHttpConnector {

        private final List<ClientHttpConnector> connectors;
        private final AtomicInteger turn = new AtomicInteger();

        InTurn(List<ClientHttpConnector> connectors) {
            this.connectors = List.copyOf(connectors);
        }

        @Override
        public Mono<ClientHttpResponse> connect(
                HttpMethod method, URI uri, Function<? super ClientHttpRequest, Mono<Void>> requestCallback) {
            return connectors
                    .get(Math.floorMod(turn.getAndIncrement(), connectors.size()))
                    .connect(method, uri, requestCallback);
        }
    }

    /**
     * java.net.http's client, HTTP/1.1 only. It keeps no limit of connections per host: one call at a time per
     * connection, the CallLimit caps connections at {@code aggregator.rest.max-connections}. Java 17's client cannot
     * be closed; its executor is shut down, and its selector thread ends once the client is unreachable.
     */
    private static RestExchange jdk(String name, String baseUrl, AggregatorProperties properties, ClientTls tls) {
        ExecutorService executor = Executors.newFixedThreadPool(THREADS, threadFactory(name + "-jdk"));
        java.net.http.HttpClient.Builder builder = java.net.http.HttpClient.newBuilder()
                .version(java.net.http.HttpClient.Version.HTTP_1_1)
                .connectTimeout(CONNECT_TIMEOUT)
                .followRedirects(java.net.http.HttpClient.Redirect.NEVER)
                .executor(executor);
        if (tls.enabled()) {
            builder.sslContext(tls.sslContext());
        }
        java.net.http.HttpClient client = builder.build();
        return new WebClientExchange(
                baseUrl,
                new JdkClientHttpConnector(client),
                limit(false, properties),
                properties.callDeadline(),
                executor::shutdownNow);
    }

    /** Calls at once per replica: one per HTTP/1.1 connection, or the replica's HTTP/2 streams. */
    private static CallLimit limit(boolean h2c, AggregatorProperties properties) {
        AggregatorProperties.Rest rest = properties.rest();
        return new CallLimit(
                h2c
                        ? Math.min(H2cStreams.PER_REPLICA, rest.h2cMaxStreams() * rest.h2cConnections())
                        : rest.maxConnections());
    }

    private static ThreadFactory threadFactory(String prefix) {
        AtomicInteger count = new AtomicInteger();
        return runnable -> {
            Thread thread = new Thread(runnable, prefix + "-" + count.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        };
    }
}
