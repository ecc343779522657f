package io.github.squarelab.square.grpc;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.squarelab.observation.PrometheusScrape;
import io.github.squarelab.proto.Input;
import io.github.squarelab.proto.SquareRpcGrpc;
import io.grpc.ManagedChannel;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.micrometer.core.instrument.binder.grpc.ObservationGrpcServerInterceptor;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.autoconfigure.actuate.observability.AutoConfigureObservability;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.client.TestRestTemplate;
import org.springframework.context.ApplicationContext;

/**
 * With management.tracing.grpc.enabled=true, for tracing, Micrometer's gRPC observation runs beside the one metering
 * layer and records its own families: each is still counted once, and net.devh's families still by the layer.
 */
@SpringBootTest(
        webEnvironment = WebEnvironment.RANDOM_PORT,
        properties = {
            "grpc.server.port=-1",
            "grpc.server.in-process-name=square-grpc-tracing",
            "management.tracing.grpc.enabled=true"
        })
@AutoConfigureObservability
class TracingObservationMetricsTests {

    private static final String CALL =
            "rpc_method=\"findSquareUnary\",rpc_service=\"vinsmath.SquareRpc\",rpc_type=\"UNARY\"}";

    private final ManagedChannel channel =
            InProcessChannelBuilder.forName("square-grpc-tracing").build();

    @Autowired
    private TestRestTemplate http;

    @Autowired
    private ApplicationContext context;

    @AfterEach
    void closeChannel() throws Exception {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }

    @Test
    void aUnaryCallIsStillCountedOnceInEveryFamily() throws Exception {
        assertThat(context.getBeansOfType(ObservationGrpcServerInterceptor.class))
                .hasSize(1);
        PrometheusScrape before = scrape();

        long square = SquareRpcGrpc.newBlockingStub(channel)
                .withDeadlineAfter(5, TimeUnit.SECONDS)
                .findSquareUnary(Input.newBuilder().setNumber(9).build())
                .getResult();

        assertThat(square).isEqualTo(81);
        Map<String, Double> once = Map.of(
                "grpc_server_seconds_count{application=\"square-grpc-service\",error=\"none\",grpc_status_code=\"OK\","
                                + CALL,
                        1.0,
                "grpc_server_received_total{application=\"square-grpc-service\",grpc_status_code=\"UNKNOWN\"," + CALL,
                        1.0,
                "grpc_server_requests_received_messages_total{application=\"square-grpc-service\","
                                + "method=\"findSquareUnary\",methodType=\"UNARY\",service=\"vinsmath.SquareRpc\"}",
                        1.0,
                "grpc_server_call_started_total{application=\"square-grpc-service\","
                                + "grpc_method=\"vinsmath.SquareRpc/findSquareUnary\",instrumentation_source=\"grpc-spring\","
                                + "instrumentation_version=\"v3.1.0.RELEASE\"}",
                        1.0);
        PrometheusScrape after = awaitEnded(once.keySet().iterator().next(), before);
        assertThat(after.movedSince(before, once.keySet())).isEqualTo(once);
    }

    /** The server times the call after the client has its answer: wait for the timer to move. */
    private PrometheusScrape awaitEnded(String timerCount, PrometheusScrape before) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        PrometheusScrape scrape = scrape();
        while (scrape.valueOrZero(timerCount) == before.valueOrZero(timerCount) && System.nanoTime() < deadline) {
            Thread.sleep(20);
            scrape = scrape();
        }
        return scrape;
    }

    private PrometheusScrape scrape() {
        return PrometheusScrape.parse(http.getForObject("/actuator/prometheus", String.class));
    }
}
