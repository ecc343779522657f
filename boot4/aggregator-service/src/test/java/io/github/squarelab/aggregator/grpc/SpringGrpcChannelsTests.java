package io.github.squarelab.aggregator.grpc;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.squarelab.observation.LocalHttp;
import io.github.squarelab.proto.Input;
import io.github.squarelab.proto.Output;
import io.github.squarelab.proto.SquareRpcGrpc;
import io.grpc.Grpc;
import io.grpc.InsecureServerCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.grpc.client.GrpcChannelFactory;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * Spring Boot 4.1 only: the aggregator's channels come from Spring gRPC's channel factory, and a comma-separated
 * replica list still reaches every replica through the aggregator's own resolver, which grpc-java's registry does not
 * know; with Boot 3.5, grpc-java makes the channels itself (aggregator-core's GrpcReplicasTests).
 */
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT, properties = "aggregator.rest.base-url=http://127.0.0.1:1")
class SpringGrpcChannelsTests {

    private static final Replica A = new Replica();
    private static final Replica B = new Replica();

    @LocalServerPort
    private int port;

    @Autowired
    private GrpcChannelFactory factory;

    @Autowired
    private List<ManagedChannel> channels;

    @DynamicPropertySource
    static void replicas(DynamicPropertyRegistry registry) throws IOException {
        registry.add("aggregator.grpc.target", () -> "127.0.0.1:" + A.port() + ",127.0.0.1:" + B.port());
    }

    @AfterAll
    static void stopReplicas() throws Exception {
        A.stop();
        B.stop();
    }

    @Test
    void bothChannelsAreMadeBySpringGrpcAndReachEveryReplica() {
        assertThat(factory).isNotNull();
        assertThat(channels).hasSize(2);

        for (int i = 0; i < 4; i++) {
            assertThat(LocalHttp.on(port).get("/grpc/unary/10"))
                    .startsWith("[{\"1\":1},{\"2\":4},")
                    .endsWith("{\"10\":100}]");
            assertThat(LocalHttp.on(port).get("/grpc/stream/3")).isEqualTo("[{\"1\":1},{\"2\":4},{\"3\":9}]");
        }

        assertThat(A.calls.get()).as("calls to replica a").isPositive();
        assertThat(B.calls.get()).as("calls to replica b").isPositive();
    }

    /** A square service on a free port of its own, counting the messages it answers. */
    private static final class Replica extends SquareRpcGrpc.SquareRpcImplBase {

        final AtomicInteger calls = new AtomicInteger();
        private Server server;

        synchronized int port() {
            if (server == null) {
                try {
                    server = Grpc.newServerBuilderForPort(0, InsecureServerCredentials.create())
                            .addService(this)
                            .build()
                            .start();
                } catch (IOException e) {
                    throw new IllegalStateException(e);
                }
            }
            return server.getPort();
        }

        void stop() throws InterruptedException {
            server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }

        @Override
        public void findSquareUnary(Input request, StreamObserver<Output> answers) {
            calls.incrementAndGet();
            answers.onNext(square(request));
            answers.onCompleted();
        }

        @Override
        public StreamObserver<Input> findSquareBiStream(StreamObserver<Output> answers) {
            return new StreamObserver<>() {
                @Override
                public void onNext(Input request) {
                    calls.incrementAndGet();
                    answers.onNext(square(request));
                }

                @Override
                public void onError(Throwable t) {}

                @Override
                public void onCompleted() {
                    answers.onCompleted();
                }
            };
        }

        private static Output square(Input request) {
            return Output.newBuilder()
                    .setNumber(request.getNumber())
                    .setResult((long) request.getNumber() * request.getNumber())
                    .build();
        }
    }
}
