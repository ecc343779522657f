package io.github.squarelab.aggregator;

import io.github.squarelab.aggregator.grpc.GrpcChannelMaker;
import io.github.squarelab.aggregator.tls.ClientTls;
import io.grpc.netty.NettyChannelBuilder;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.grpc.client.ChannelBuilderOptions;
import org.springframework.grpc.client.ChannelCredentialsProvider;
import org.springframework.grpc.client.GrpcChannelBuilderCustomizer;
import org.springframework.grpc.client.GrpcChannelFactory;

/**
 * Spring Boot 4.1's gRPC client starter makes the aggregator's channels (with Boot 3.5, grpc-java does): its channel
 * factory, with every setting of the channel from aggregator-core's GrpcClientConfiguration, and the credentials of
 * aggregator.tls.bundle in place of the starter's own per-channel properties (spring.grpc.client.channel.*). Its
 * observation interceptor is off (application.yml): the aggregator's metrics are the same on both generations.
 */
@Configuration(proxyBeanMethods = false)
class GrpcChannelWiring {

    @Bean
    ChannelCredentialsProvider squareChannelCredentials(ClientTls clientTls) {
        return target -> clientTls.grpcCredentials();
    }

    @Bean
    GrpcChannelMaker springGrpcChannels(GrpcChannelFactory factory) {
        return (target, credentials, configuration) -> factory.createChannel(
                target,
                ChannelBuilderOptions.defaults().withCustomizer((GrpcChannelBuilderCustomizer<NettyChannelBuilder>)
                        (name, builder) -> configuration.accept(builder)));
    }
}
