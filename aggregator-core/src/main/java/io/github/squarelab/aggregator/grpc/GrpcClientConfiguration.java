package io.github.squarelab.aggregator.grpc;

import io.github.squarelab.aggregator.AggregatorProperties;
import io.github.squarelab.aggregator.netty.ClientEventLoops;
import io.github.squarelab.aggregator.tls.ClientTls;
import io.grpc.ChannelCredentials;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import io.netty.channel.ChannelOption;
import java.net.InetSocketAddress;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Two channels to the gRPC square service (plaintext, or TLS as {@link ClientTls} says), round_robin over its replicas: the pipelined stream's own, so that
 * its messages do not queue every unary call and ping-pong message behind them, and one for those two
 * (docs/performance.md, "The gRPC channels").
 */
@Configuration(proxyBeanMethods = false)
class GrpcClientConfiguration {

    /**
     * A unary call that fails UNAVAILABLE (its replica refused, reset or went away) is tried once more,
     * which round_robin sends to another replica; squares are idempotent. A timeout is not retried.
     */
    private static final Map<String, ?> SERVICE_CONFIG = Map.of(
            "methodConfig",
            List.of(Map.of(
                    "name", List.of(Map.of("service", "vinsmath.SquareRpc", "method", "findSquareUnary")),
                    "retryPolicy",
                            Map.of(
                                    "maxAttempts",
                                    2.0,
                                    "initialBackoff",
                                    "0.001s",
                                    "maxBackoff",
                                    "0.001s",
                                    "backoffMultiplier",
                                    1.0,
                                    "retryableStatusCodes",
                                    List.of("UNAVAILABLE")))));

    /**
     * The most the channel keeps of the messages of calls that may still be retried, i.e. whose answer has not begun;
     * a call past it is sent without a retry. It counts wire bytes, but keeps the message objects, about 4 times
     * larger: grpc-java's default, 16 MiB, held some 70 MB of collection payloads on the lab's 128 MiB heap under
     * overload. 4 MiB still covers the lab's 100 requests x 8 calls in flight at about 3 KB a collection call.
     */
    static final long RETRY_BUFFER_BYTES = 4L * 1024 * 1024;

    /**
     * Shut down after the web server has finished its requests, letting calls under way complete, and before the
     * event loops it runs on stop (it takes them, so Spring closes it first).
     */
    @Bean(destroyMethod = "shutdown")
    ManagedChannel squareGrpcChannel(
            AggregatorProperties properties,
            ClientEventLoops clientEventLoops,
            ClientTls clientTls,
            ObjectProvider<GrpcChannelMaker> maker) {
        return unaryChannel(properties, clientEventLoops, clientTls, maker.getIfAvailable(GrpcChannelMaker::plain));
    }

    /** The pipelined stream's own connections, on the same event loops (each connection keeps to one loop). */
    @Bean(destroyMethod = "shutdown")
    ManagedChannel squareGrpcStreamChannel(
            AggregatorProperties properties,
            ClientEventLoops clientEventLoops,
            ClientTls clientTls,
            ObjectProvider<GrpcChannelMaker> maker) {
        return streamChannel(properties, clientEventLoops, clientTls, maker.getIfAvailable(GrpcChannelMaker::plain));
    }

    /** The unary calls' and ping-pong's channel. */
    static ManagedChannel unaryChannel(
            AggregatorProperties properties, ClientEventLoops loops, ClientTls clientTls, GrpcChannelMaker maker) {
        return connected(make(properties, loops, clientTls, maker, builder -> builder.enableRetry()
                .retryBufferSize(RETRY_BUFFER_BYTES)));
    }

    static ManagedChannel streamChannel(
            AggregatorProperties properties, ClientEventLoops loops, ClientTls clientTls, GrpcChannelMaker maker) {
        // No retry: the stream fails over itself (GrpcStreamSquareClient), and grpc-java's retry keeps every message
        // sent until the first answer, which under load held most of a request's messages at once.
        return connected(make(properties, loops, clientTls, maker, NettyChannelBuilder::disableRetry));
    }

    /** Connects a channel, now, so that the first request does not pay for the transport and the connection. */
    private static ManagedChannel connected(ManagedChannel channel) {
        channel.getState(true);
        return channel;
    }

    private static ManagedChannel make(
            AggregatorProperties properties,
            ClientEventLoops clientEventLoops,
            ClientTls clientTls,
            GrpcChannelMaker maker,
            Consumer<NettyChannelBuilder> retry) {
        ChannelCredentials credentials = clientTls.grpcCredentials();
        Target target = Target.of(properties.grpc().target(), credentials);
        return maker.make(target.name(), credentials, builder -> {
            target.resolveWith(builder);
            // One Netty: the REST client's event loops and pooled allocator, not grpc-java's own of each.
            builder.eventLoopGroup(clientEventLoops.group())
                    .channelType(clientEventLoops.socketChannelType(), InetSocketAddress.class)
                    .withOption(ChannelOption.ALLOCATOR, clientEventLoops.allocator())
                    // Our callbacks never block (they complete a Mono or send the next message), so they run on the
                    // transport's event loop rather than hopping to grpc-java's default cached thread pool.
                    .directExecutor()
                    .defaultLoadBalancingPolicy("round_robin")
                    .disableServiceConfigLookUp()
                    .defaultServiceConfig(SERVICE_CONFIG);
            retry.accept(builder);
        });
    }

    /**
     * A comma-separated list of {@code host:port} goes to our own resolver, in a registry of this channel's own; one
     * address or any other grpc-java target ({@code dns:///host:6565}) to grpc-java.
     */
    record Target(String name, ReplicaListNameResolverProvider replicas) {

        static Target of(String target, ChannelCredentials credentials) {
            if (!target.contains(",")) {
                return new Target(target.trim(), null);
            }
            List<String> replicas = Arrays.stream(target.split(","))
                    .map(String::trim)
                    .filter(s -> !s.isEmpty())
                    .toList();
            ReplicaListNameResolverProvider provider =
                    new ReplicaListNameResolverProvider(replicas, !(credentials instanceof InsecureChannelCredentials));
            return new Target(provider.target(), provider);
        }

        /**
         * The replica list's resolver, as the channel's only one: grpc-java puts a provider given here in a registry of
         * the channel's own (the one way left to give a channel made by someone else, Spring gRPC's factory, a
         * resolver of its own; deprecated in favour of a registry passed where the builder is made).
         */
        @SuppressWarnings("deprecation")
        void resolveWith(NettyChannelBuilder builder) {
            if (replicas != null) {
                builder.nameResolverFactory(replicas);
            }
        }
    }

    @Bean
    ReconnectEverySecond squareGrpcReconnect(List<ManagedChannel> channels) {
        return new ReconnectEverySecond(channels);
    }

    @Bean
    GrpcUnarySquareClient grpcUnarySquareClient(
            ManagedChannel squareGrpcChannel, AggregatorProperties properties, ClientTls clientTls) {
        return new GrpcUnarySquareClient(
                squareGrpcChannel, properties.grpc().target(), properties.callDeadline(), !clientTls.enabled());
    }

    @Bean
    GrpcStreamSquareClient grpcPingPongSquareClient(
            ManagedChannel squareGrpcChannel, AggregatorProperties properties, ClientTls clientTls) {
        return GrpcStreamSquareClient.pingPong(
                squareGrpcChannel, properties.grpc().target(), properties.deadline(), !clientTls.enabled());
    }

    @Bean
    GrpcStreamSquareClient grpcStreamSquareClient(
            ManagedChannel squareGrpcStreamChannel, AggregatorProperties properties, ClientTls clientTls) {
        return GrpcStreamSquareClient.pipelined(
                squareGrpcStreamChannel, properties.grpc().target(), properties.deadline(), !clientTls.enabled());
    }
}
