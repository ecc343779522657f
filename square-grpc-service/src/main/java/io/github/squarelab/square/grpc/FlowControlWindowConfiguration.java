package io.github.squarelab.square.grpc;

import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import net.devh.boot.grpc.server.serverfactory.GrpcServerConfigurer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * How far a client may send ahead of what the service has read (each stream's and the connection's HTTP/2 window): what
 * it lets in waits in direct buffers (docs/performance.md, "The gRPC service's flow-control window").
 */
@Configuration(proxyBeanMethods = false)
class FlowControlWindowConfiguration {

    /** Fixed, no probe: a WAN round trip's worth of bytes, and direct memory bounded for 100 streams. */
    static final int WINDOW_BYTES = 256 * 1024;

    @Bean
    GrpcServerConfigurer flowControlWindow() {
        return serverBuilder -> {
            if (serverBuilder instanceof NettyServerBuilder netty) {
                netty.flowControlWindow(WINDOW_BYTES);
            }
        };
    }
}
