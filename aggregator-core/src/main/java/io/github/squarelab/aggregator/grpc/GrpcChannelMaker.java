package io.github.squarelab.aggregator.grpc;

import io.grpc.ChannelCredentials;
import io.grpc.Grpc;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.netty.NettyChannelBuilder;
import java.util.function.Consumer;

/**
 * How the aggregator's two gRPC channels are made, the one thing about them that depends on the Spring generation: with
 * Spring Boot 3.5 grpc-java makes them itself ({@link #plain()}, the default); with Spring Boot 4.1 Spring gRPC's
 * channel factory does (boot4/aggregator-service), which takes the credentials from its own provider. Either way every
 * setting of the channel is {@link GrpcClientConfiguration}'s.
 */
@FunctionalInterface
public interface GrpcChannelMaker {

    /**
     * @param target a grpc-java target, or the replica list's own ({@link ReplicaListNameResolverProvider#target()})
     * @param configuration every setting of the channel, applied to grpc-netty's builder before it is built
     */
    ManagedChannel make(String target, ChannelCredentials credentials, Consumer<NettyChannelBuilder> configuration);

    /** grpc-java's own builder, from its provider registry: grpc-netty's, the one transport here. */
    static GrpcChannelMaker plain() {
        return (target, credentials, configuration) -> {
            NettyChannelBuilder builder = netty(Grpc.newChannelBuilder(target, credentials));
            configuration.accept(builder);
            return builder.build();
        };
    }

    /**
     * The builder grpc-java's provider registry hands out is grpc-netty's, the one transport here; it is asked there
     * rather than made with {@code NettyChannelBuilder.forTarget}, which checks no provider.
     */
    static NettyChannelBuilder netty(ManagedChannelBuilder<?> builder) {
        if (builder instanceof NettyChannelBuilder netty) {
            return netty;
        }
        throw new IllegalStateException("grpc-netty's channel builder expected, got "
                + builder.getClass().getName());
    }
}
