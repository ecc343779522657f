package io.github.squarelab.square.grpc;

import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import net.devh.boot.grpc.server.serverfactory.GrpcServerConfigurer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * How far a client may send ahead of what the service has read: the HTTP/2 flow-control window of each stream and of
 * the connection. A bidi stream reads its next message only while its client reads the answers
 * ({@code SquaringStream}), so whatever the window lets in waits in pooled direct buffers. At grpc-java's 1 MiB, which
 * its bandwidth-delay probe may grow further, 100 pipelined streams of collection payloads filled the JVM's 128 MiB of
 * direct memory and the transport failed with every stream on it; the service's peak RSS reached 341 MiB.
 */
@Configuration(proxyBeanMethods = false)
class FlowControlWindowConfiguration {

    /**
     * 256 KiB, fixed (no probe): at most 25 MiB waiting for 100 streams, and still a round trip's worth of bytes on
     * the lab's simulated WAN (20 ms at 100 Mbit/s is 250 KB). Measured with 100 pipelined streams of n = 1000:
     * collection payloads no longer fail and the peak RSS fell to about 215-232 MiB; the price is about 10 % of the
     * gRPC paths' requests per second with small messages, as the aggregator waits on the window more often
     * (docs/performance.md). 512 KiB cost as much and peaked at 263-269 MiB.
     */
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
