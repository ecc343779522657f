package io.github.squarelab.aggregator.netty;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** The event loops both clients share; see {@link ClientEventLoops}. */
@Configuration(proxyBeanMethods = false)
class NettyConfiguration {

    /**
     * Closed after every bean that takes it (the gRPC channel, the REST pools): Spring destroys a bean's dependents
     * first, so the channel is shut down before its loops stop.
     */
    @Bean
    ClientEventLoops clientEventLoops() {
        return new ClientEventLoops("square-client");
    }
}
