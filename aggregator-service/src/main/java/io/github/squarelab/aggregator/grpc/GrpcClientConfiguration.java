package io.github.squarelab.aggregator.grpc;

import io.github.squarelab.aggregator.AggregatorProperties;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * One channel (one HTTP/2 connection, multiplexed) to the gRPC square service, shared by both gRPC
 * clients. Plaintext, as the contract says.
 */
@Configuration(proxyBeanMethods = false)
class GrpcClientConfiguration {

    /** Shut down after the web server has finished its requests, letting calls under way complete. */
    @Bean(destroyMethod = "shutdown")
    ManagedChannel squareGrpcChannel(AggregatorProperties properties) {
        ManagedChannel channel = Grpc.newChannelBuilder(properties.grpc().target(), InsecureChannelCredentials.create())
            // Our callbacks never block (they complete a Mono or send the next message), so they run on the
            // transport's event loop rather than hopping to grpc-java's default cached thread pool.
            .directExecutor()
            .build();
        // Connect now, so that the first request does not pay for the transport and the connection.
        channel.getState(true);
        return channel;
    }

    @Bean
    ReconnectEverySecond squareGrpcReconnect(ManagedChannel squareGrpcChannel) {
        return new ReconnectEverySecond(squareGrpcChannel);
    }

    @Bean
    GrpcUnarySquareClient grpcUnarySquareClient(ManagedChannel squareGrpcChannel, AggregatorProperties properties) {
        return new GrpcUnarySquareClient(squareGrpcChannel, properties.grpc().target(), properties.callDeadline());
    }

    @Bean
    GrpcStreamSquareClient grpcStreamSquareClient(ManagedChannel squareGrpcChannel, AggregatorProperties properties) {
        return new GrpcStreamSquareClient(squareGrpcChannel, properties.grpc().target(), properties.deadline());
    }
}
