package io.github.squarelab.square.grpc;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.squarelab.observation.CachedMeterObservationHandler;
import io.github.squarelab.observation.LocalHttp;
import io.github.squarelab.observation.PrometheusScrape;
import io.github.squarelab.proto.Input;
import io.github.squarelab.proto.Output;
import io.github.squarelab.proto.SquareRpcGrpc;
import io.github.squarelab.square.grpc.metering.MeteringInterceptor;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.micrometer.core.instrument.binder.grpc.MetricCollectingServerInterceptor;
import io.micrometer.core.instrument.binder.grpc.ObservationGrpcServerInterceptor;
import io.micrometer.core.instrument.observation.MeterObservationHandler;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.ApplicationContext;

/**
 * The metrics Micrometer's gRPC observation gave the service (grpc_server_seconds, _active_seconds, _received_total,
 * _sent_total, _cancelled_total) and the actuator's own http_server_requests, after real calls through the packaged
 * configuration: exact counts, each message once, and the families, types and tag sets as they were with Spring
 * Boot's DefaultMeterObservationHandler (README, "Metrics"); and net.devh's own grpc_server_* metrics, which the
 * contract names (Micrometer's MetricCollecting interceptor's and the gRPC A66 ones of net.devh's stream tracer),
 * counted and pinned the same way. All were pinned while those three layers recorded them; the service's one metering
 * layer (metering.MeteringInterceptor) records them now, and must give the same scrape, on both Spring generations: each
 * has a subclass, ObservationMetricsTests, that serves the service in process as {@link #IN_PROCESS} with that
 * generation's starter and turns its test metrics on, and a user's own exclude of an auto-configuration beside it, which
 * must not bring back the metering layers the application excludes.
 */
public abstract class ObservationMetricsContract {

    /** The in-process server's name, which each generation's subclass gives its gRPC starter. */
    protected static final String IN_PROCESS = "square-grpc-observation";

    private static final String STREAM = "findSquareBiStream";
    private static final String UNARY = "findSquareUnary";

    private final ManagedChannel channel =
            InProcessChannelBuilder.forName(IN_PROCESS).build();

    @LocalServerPort
    private int port;

    @Autowired
    private ApplicationContext context;

    /**
     * observation-meters' handler first among the meter handlers (Boot 3.5's own default backs off for it; Boot 4.1's
     * stays, after it, and only the first handler of the group records an observation): each is recorded once.
     */
    @Test
    void theCachedHandlerIsTheMeterObservationHandlerThatRecords() {
        assertThat(context.getBeanProvider(MeterObservationHandler.class).orderedStream())
                .first()
                .isInstanceOf(CachedMeterObservationHandler.class);
    }

    /** One metering layer (issue #28): neither of the interceptors the starters would add beside it. */
    @Test
    void oneMeteringLayerMetersEveryCall() {
        assertThat(context.getBeansOfType(MeteringInterceptor.class)).hasSize(1);
        assertThat(context.getBeansOfType(MetricCollectingServerInterceptor.class))
                .isEmpty();
        assertThat(context.getBeansOfType(ObservationGrpcServerInterceptor.class))
                .isEmpty();
    }

    @AfterEach
    void closeChannel() throws Exception {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }

    @Test
    void aStreamOfFiveMessagesIsCountedFiveTimesEachWayAndTimedOnce() throws Exception {
        PrometheusScrape before = scrape();

        assertThat(stream(1, 2, 3, 4, 5)).containsExactly(1L, 4L, 9L, 16L, 25L);

        assertCountedSince(
                before,
                Map.of(
                        started("grpc_server_received_total", STREAM), 5.0,
                        started("grpc_server_sent_total", STREAM), 5.0,
                        ended("grpc_server_seconds_count", "OK", STREAM), 1.0,
                        started("grpc_server_cancelled_total", STREAM), 0.0));
    }

    @Test
    void aUnaryCallIsCountedOnceEachWayAndTimedOnce() throws Exception {
        PrometheusScrape before = scrape();

        assertThat(unary(7)).isEqualTo(49);

        assertCountedSince(
                before,
                Map.of(
                        started("grpc_server_received_total", UNARY), 1.0,
                        started("grpc_server_sent_total", UNARY), 1.0,
                        ended("grpc_server_seconds_count", "OK", UNARY), 1.0));
    }

    /** A cancelled call never gets a status: it is timed under UNKNOWN, as Micrometer's handler has always timed it. */
    @Test
    void aStreamCancelledAfterTwoMessagesIsCountedOnceAsCancelled() throws Exception {
        PrometheusScrape before = scrape();

        cancelledAfterTwoAnswers();

        assertCountedSince(
                before,
                Map.of(
                        started("grpc_server_received_total", STREAM), 2.0,
                        started("grpc_server_sent_total", STREAM), 2.0,
                        started("grpc_server_cancelled_total", STREAM), 1.0,
                        ended("grpc_server_seconds_count", "UNKNOWN", STREAM), 1.0,
                        ended("grpc_server_seconds_count", "OK", STREAM), 0.0));
    }

    /**
     * Pinned from the scrape with Spring Boot's DefaultMeterObservationHandler (commit "Pin the observation metrics"):
     * every family, type, tag set and histogram of the observations, after one call of each kind. (The pin held the
     * same registry; the JDK's client the test uses on both generations adds none.)
     */
    @Test
    void theObservationMetricsKeepTheirFamiliesTypesAndTagSets() throws Exception {
        scrape();
        stream(1, 2, 3, 4, 5);
        unary(7);
        cancelledAfterTwoAnswers();
        awaitNoCallActive();
        http().get("/actuator/health");

        assertThat(scrape().series(
                                "grpc_server_seconds",
                                "grpc_server_active",
                                "grpc_server_received_total",
                                "grpc_server_sent_total",
                                "grpc_server_cancelled_total",
                                "http_server_requests"))
                .isEqualTo(PINNED);
    }

    /**
     * net.devh's own grpc_server_* metrics, which the contract names: Micrometer's MetricCollecting interceptor's
     * processing duration and message counters, and the gRPC A66 metrics of net.devh's stream tracer. Pinned from
     * their scrape after one call of each kind, before their layers are made one (issue #28): every family, type, tag
     * set and histogram.
     */
    @Test
    void netDevhsMetricsKeepTheirFamiliesTypesAndTagSets() throws Exception {
        scrape();
        stream(1, 2, 3, 4, 5);
        unary(7);
        cancelledAfterTwoAnswers();
        awaitNoCallActive();

        assertThat(scrape().series(
                                "grpc_server_processing_duration",
                                "grpc_server_requests_received_messages",
                                "grpc_server_responses_sent_messages",
                                "grpc_server_call"))
                .isEqualTo(NET_DEVH_PINNED);
    }

    @Test
    void netDevhsMetricsCountEachCallAndEachMessageOnce() throws Exception {
        PrometheusScrape before = scrape();

        stream(1, 2, 3, 4, 5);
        unary(7);

        Map<String, Double> deltas = new HashMap<>();
        for (String method : List.of(STREAM, UNARY)) {
            double messages = method.equals(STREAM) ? 5.0 : 1.0;
            deltas.put(collecting("grpc_server_processing_duration_seconds_count", method, ",statusCode=\"OK\""), 1.0);
            deltas.put(collecting("grpc_server_requests_received_messages_total", method, ""), messages);
            deltas.put(collecting("grpc_server_responses_sent_messages_total", method, ""), messages);
            deltas.put(a66("grpc_server_call_started_total", method, ""), 1.0);
            deltas.put(a66("grpc_server_call_duration_seconds_count", method, "grpc_status=\"OK\","), 1.0);
        }
        assertCountedSince(before, deltas);
    }

    /** A series of Micrometer's MetricCollecting interceptor. */
    private static String collecting(String name, String method, String status) {
        return name + "{application=\"square-grpc-service\",method=\"" + method + "\",methodType=\""
                + (method.equals(UNARY) ? "UNARY" : "BIDI_STREAMING") + "\",service=\"vinsmath.SquareRpc\"" + status
                + "}";
    }

    /** A series of net.devh's gRPC A66 stream tracer. */
    private static String a66(String name, String method, String status) {
        return name + "{application=\"square-grpc-service\",grpc_method=\"vinsmath.SquareRpc/" + method + "\"," + status
                + "instrumentation_source=\"grpc-spring\",instrumentation_version=\"v3.1.0.RELEASE\"}";
    }

    private static final String NET_DEVH_PINNED =
            """
            # TYPE grpc_server_call_duration_seconds histogram
            # TYPE grpc_server_call_duration_seconds_max gauge
            # TYPE grpc_server_call_rcvd_total_compressed_message_size_bytes histogram
            # TYPE grpc_server_call_rcvd_total_compressed_message_size_bytes_max gauge
            # TYPE grpc_server_call_sent_total_compressed_message_size_bytes histogram
            # TYPE grpc_server_call_sent_total_compressed_message_size_bytes_max gauge
            # TYPE grpc_server_call_started_total counter
            # TYPE grpc_server_processing_duration_seconds histogram
            # TYPE grpc_server_processing_duration_seconds_max gauge
            # TYPE grpc_server_requests_received_messages_total counter
            # TYPE grpc_server_responses_sent_messages_total counter
            grpc_server_call_duration_seconds_bucket{application="square-grpc-service",grpc_method="vinsmath.SquareRpc/findSquareBiStream",grpc_status="CANCELLED",instrumentation_source="grpc-spring",instrumentation_version="v3.1.0.RELEASE"} [41 buckets]
            grpc_server_call_duration_seconds_bucket{application="square-grpc-service",grpc_method="vinsmath.SquareRpc/findSquareBiStream",grpc_status="OK",instrumentation_source="grpc-spring",instrumentation_version="v3.1.0.RELEASE"} [41 buckets]
            grpc_server_call_duration_seconds_bucket{application="square-grpc-service",grpc_method="vinsmath.SquareRpc/findSquareUnary",grpc_status="OK",instrumentation_source="grpc-spring",instrumentation_version="v3.1.0.RELEASE"} [41 buckets]
            grpc_server_call_duration_seconds_count{application="square-grpc-service",grpc_method="vinsmath.SquareRpc/findSquareBiStream",grpc_status="CANCELLED",instrumentation_source="grpc-spring",instrumentation_version="v3.1.0.RELEASE"}
            grpc_server_call_duration_seconds_count{application="square-grpc-service",grpc_method="vinsmath.SquareRpc/findSquareBiStream",grpc_status="OK",instrumentation_source="grpc-spring",instrumentation_version="v3.1.0.RELEASE"}
            grpc_server_call_duration_seconds_count{application="square-grpc-service",grpc_method="vinsmath.SquareRpc/findSquareUnary",grpc_status="OK",instrumentation_source="grpc-spring",instrumentation_version="v3.1.0.RELEASE"}
            grpc_server_call_duration_seconds_max{application="square-grpc-service",grpc_method="vinsmath.SquareRpc/findSquareBiStream",grpc_status="CANCELLED",instrumentation_source="grpc-spring",instrumentation_version="v3.1.0.RELEASE"}
            grpc_server_call_duration_seconds_max{application="square-grpc-service",grpc_method="vinsmath.SquareRpc/findSquareBiStream",grpc_status="OK",instrumentation_source="grpc-spring",instrumentation_version="v3.1.0.RELEASE"}
            grpc_server_call_duration_seconds_max{application="square-grpc-service",grpc_method="vinsmath.SquareRpc/findSquareUnary",grpc_status="OK",instrumentation_source="grpc-spring",instrumentation_version="v3.1.0.RELEASE"}
            grpc_server_call_duration_seconds_sum{application="square-grpc-service",grpc_method="vinsmath.SquareRpc/findSquareBiStream",grpc_status="CANCELLED",instrumentation_source="grpc-spring",instrumentation_version="v3.1.0.RELEASE"}
            grpc_server_call_duration_seconds_sum{application="square-grpc-service",grpc_method="vinsmath.SquareRpc/findSquareBiStream",grpc_status="OK",instrumentation_source="grpc-spring",instrumentation_version="v3.1.0.RELEASE"}
            grpc_server_call_duration_seconds_sum{application="square-grpc-service",grpc_method="vinsmath.SquareRpc/findSquareUnary",grpc_status="OK",instrumentation_source="grpc-spring",instrumentation_version="v3.1.0.RELEASE"}
            grpc_server_call_rcvd_total_compressed_message_size_bytes_bucket{application="square-grpc-service",grpc_method="vinsmath.SquareRpc/findSquareBiStream",grpc_status="CANCELLED",instrumentation_source="grpc-spring",instrumentation_version="v3.1.0.RELEASE"} [14 buckets]
            grpc_server_call_rcvd_total_compressed_message_size_bytes_bucket{application="square-grpc-service",grpc_method="vinsmath.SquareRpc/findSquareBiStream",grpc_status="OK",instrumentation_source="grpc-spring",instrumentation_version="v3.1.0.RELEASE"} [14 buckets]
            grpc_server_call_rcvd_total_compressed_message_size_bytes_bucket{application="square-grpc-service",grpc_method="vinsmath.SquareRpc/findSquareUnary",grpc_status="OK",instrumentation_source="grpc-spring",instrumentation_version="v3.1.0.RELEASE"} [14 buckets]
            grpc_server_call_rcvd_total_compressed_message_size_bytes_count{application="square-grpc-service",grpc_method="vinsmath.SquareRpc/findSquareBiStream",grpc_status="CANCELLED",instrumentation_source="grpc-spring",instrumentation_version="v3.1.0.RELEASE"}
            grpc_server_call_rcvd_total_compressed_message_size_bytes_count{application="square-grpc-service",grpc_method="vinsmath.SquareRpc/findSquareBiStream",grpc_status="OK",instrumentation_source="grpc-spring",instrumentation_version="v3.1.0.RELEASE"}
            grpc_server_call_rcvd_total_compressed_message_size_bytes_count{application="square-grpc-service",grpc_method="vinsmath.SquareRpc/findSquareUnary",grpc_status="OK",instrumentation_source="grpc-spring",instrumentation_version="v3.1.0.RELEASE"}
            grpc_server_call_rcvd_total_compressed_message_size_bytes_max{application="square-grpc-service",grpc_method="vinsmath.SquareRpc/findSquareBiStream",grpc_status="CANCELLED",instrumentation_source="grpc-spring",instrumentation_version="v3.1.0.RELEASE"}
            grpc_server_call_rcvd_total_compressed_message_size_bytes_max{application="square-grpc-service",grpc_method="vinsmath.SquareRpc/findSquareBiStream",grpc_status="OK",instrumentation_source="grpc-spring",instrumentation_version="v3.1.0.RELEASE"}
            grpc_server_call_rcvd_total_compressed_message_size_bytes_max{application="square-grpc-service",grpc_method="vinsmath.SquareRpc/findSquareUnary",grpc_status="OK",instrumentation_source="grpc-spring",instrumentation_version="v3.1.0.RELEASE"}
            grpc_server_call_rcvd_total_compressed_message_size_bytes_sum{application="square-grpc-service",grpc_method="vinsmath.SquareRpc/findSquareBiStream",grpc_status="CANCELLED",instrumentation_source="grpc-spring",instrumentation_version="v3.1.0.RELEASE"}
            grpc_server_call_rcvd_total_compressed_message_size_bytes_sum{application="square-grpc-service",grpc_method="vinsmath.SquareRpc/findSquareBiStream",grpc_status="OK",instrumentation_source="grpc-spring",instrumentation_version="v3.1.0.RELEASE"}
            grpc_server_call_rcvd_total_compressed_message_size_bytes_sum{application="square-grpc-service",grpc_method="vinsmath.SquareRpc/findSquareUnary",grpc_status="OK",instrumentation_source="grpc-spring",instrumentation_version="v3.1.0.RELEASE"}
            grpc_server_call_sent_total_compressed_message_size_bytes_bucket{application="square-grpc-service",grpc_method="vinsmath.SquareRpc/findSquareBiStream",grpc_status="CANCELLED",instrumentation_source="grpc-spring",instrumentation_version="v3.1.0.RELEASE"} [14 buckets]
            grpc_server_call_sent_total_compressed_message_size_bytes_bucket{application="square-grpc-service",grpc_method="vinsmath.SquareRpc/findSquareBiStream",grpc_status="OK",instrumentation_source="grpc-spring",instrumentation_version="v3.1.0.RELEASE"} [14 buckets]
            grpc_server_call_sent_total_compressed_message_size_bytes_bucket{application="square-grpc-service",grpc_method="vinsmath.SquareRpc/findSquareUnary",grpc_status="OK",instrumentation_source="grpc-spring",instrumentation_version="v3.1.0.RELEASE"} [14 buckets]
            grpc_server_call_sent_total_compressed_message_size_bytes_count{application="square-grpc-service",grpc_method="vinsmath.SquareRpc/findSquareBiStream",grpc_status="CANCELLED",instrumentation_source="grpc-spring",instrumentation_version="v3.1.0.RELEASE"}
            grpc_server_call_sent_total_compressed_message_size_bytes_count{application="square-grpc-service",grpc_method="vinsmath.SquareRpc/findSquareBiStream",grpc_status="OK",instrumentation_source="grpc-spring",instrumentation_version="v3.1.0.RELEASE"}
            grpc_server_call_sent_total_compressed_message_size_bytes_count{application="square-grpc-service",grpc_method="vinsmath.SquareRpc/findSquareUnary",grpc_status="OK",instrumentation_source="grpc-spring",instrumentation_version="v3.1.0.RELEASE"}
            grpc_server_call_sent_total_compressed_message_size_bytes_max{application="square-grpc-service",grpc_method="vinsmath.SquareRpc/findSquareBiStream",grpc_status="CANCELLED",instrumentation_source="grpc-spring",instrumentation_version="v3.1.0.RELEASE"}
            grpc_server_call_sent_total_compressed_message_size_bytes_max{application="square-grpc-service",grpc_method="vinsmath.SquareRpc/findSquareBiStream",grpc_status="OK",instrumentation_source="grpc-spring",instrumentation_version="v3.1.0.RELEASE"}
            grpc_server_call_sent_total_compressed_message_size_bytes_max{application="square-grpc-service",grpc_method="vinsmath.SquareRpc/findSquareUnary",grpc_status="OK",instrumentation_source="grpc-spring",instrumentation_version="v3.1.0.RELEASE"}
            grpc_server_call_sent_total_compressed_message_size_bytes_sum{application="square-grpc-service",grpc_method="vinsmath.SquareRpc/findSquareBiStream",grpc_status="CANCELLED",instrumentation_source="grpc-spring",instrumentation_version="v3.1.0.RELEASE"}
            grpc_server_call_sent_total_compressed_message_size_bytes_sum{application="square-grpc-service",grpc_method="vinsmath.SquareRpc/findSquareBiStream",grpc_status="OK",instrumentation_source="grpc-spring",instrumentation_version="v3.1.0.RELEASE"}
            grpc_server_call_sent_total_compressed_message_size_bytes_sum{application="square-grpc-service",grpc_method="vinsmath.SquareRpc/findSquareUnary",grpc_status="OK",instrumentation_source="grpc-spring",instrumentation_version="v3.1.0.RELEASE"}
            grpc_server_call_started_total{application="square-grpc-service",grpc_method="vinsmath.SquareRpc/findSquareBiStream",instrumentation_source="grpc-spring",instrumentation_version="v3.1.0.RELEASE"}
            grpc_server_call_started_total{application="square-grpc-service",grpc_method="vinsmath.SquareRpc/findSquareUnary",instrumentation_source="grpc-spring",instrumentation_version="v3.1.0.RELEASE"}
            grpc_server_processing_duration_seconds_bucket{application="square-grpc-service",method="Check",methodType="UNARY",service="grpc.health.v1.Health",statusCode="OK"} [69 buckets]
            grpc_server_processing_duration_seconds_bucket{application="square-grpc-service",method="ServerReflectionInfo",methodType="BIDI_STREAMING",service="grpc.reflection.v1alpha.ServerReflection",statusCode="OK"} [69 buckets]
            grpc_server_processing_duration_seconds_bucket{application="square-grpc-service",method="Watch",methodType="SERVER_STREAMING",service="grpc.health.v1.Health",statusCode="OK"} [69 buckets]
            grpc_server_processing_duration_seconds_bucket{application="square-grpc-service",method="findSquareBiStream",methodType="BIDI_STREAMING",service="vinsmath.SquareRpc",statusCode="CANCELLED"} [69 buckets]
            grpc_server_processing_duration_seconds_bucket{application="square-grpc-service",method="findSquareBiStream",methodType="BIDI_STREAMING",service="vinsmath.SquareRpc",statusCode="OK"} [69 buckets]
            grpc_server_processing_duration_seconds_bucket{application="square-grpc-service",method="findSquareUnary",methodType="UNARY",service="vinsmath.SquareRpc",statusCode="OK"} [69 buckets]
            grpc_server_processing_duration_seconds_count{application="square-grpc-service",method="Check",methodType="UNARY",service="grpc.health.v1.Health",statusCode="OK"}
            grpc_server_processing_duration_seconds_count{application="square-grpc-service",method="ServerReflectionInfo",methodType="BIDI_STREAMING",service="grpc.reflection.v1alpha.ServerReflection",statusCode="OK"}
            grpc_server_processing_duration_seconds_count{application="square-grpc-service",method="Watch",methodType="SERVER_STREAMING",service="grpc.health.v1.Health",statusCode="OK"}
            grpc_server_processing_duration_seconds_count{application="square-grpc-service",method="findSquareBiStream",methodType="BIDI_STREAMING",service="vinsmath.SquareRpc",statusCode="CANCELLED"}
            grpc_server_processing_duration_seconds_count{application="square-grpc-service",method="findSquareBiStream",methodType="BIDI_STREAMING",service="vinsmath.SquareRpc",statusCode="OK"}
            grpc_server_processing_duration_seconds_count{application="square-grpc-service",method="findSquareUnary",methodType="UNARY",service="vinsmath.SquareRpc",statusCode="OK"}
            grpc_server_processing_duration_seconds_max{application="square-grpc-service",method="Check",methodType="UNARY",service="grpc.health.v1.Health",statusCode="OK"}
            grpc_server_processing_duration_seconds_max{application="square-grpc-service",method="ServerReflectionInfo",methodType="BIDI_STREAMING",service="grpc.reflection.v1alpha.ServerReflection",statusCode="OK"}
            grpc_server_processing_duration_seconds_max{application="square-grpc-service",method="Watch",methodType="SERVER_STREAMING",service="grpc.health.v1.Health",statusCode="OK"}
            grpc_server_processing_duration_seconds_max{application="square-grpc-service",method="findSquareBiStream",methodType="BIDI_STREAMING",service="vinsmath.SquareRpc",statusCode="CANCELLED"}
            grpc_server_processing_duration_seconds_max{application="square-grpc-service",method="findSquareBiStream",methodType="BIDI_STREAMING",service="vinsmath.SquareRpc",statusCode="OK"}
            grpc_server_processing_duration_seconds_max{application="square-grpc-service",method="findSquareUnary",methodType="UNARY",service="vinsmath.SquareRpc",statusCode="OK"}
            grpc_server_processing_duration_seconds_sum{application="square-grpc-service",method="Check",methodType="UNARY",service="grpc.health.v1.Health",statusCode="OK"}
            grpc_server_processing_duration_seconds_sum{application="square-grpc-service",method="ServerReflectionInfo",methodType="BIDI_STREAMING",service="grpc.reflection.v1alpha.ServerReflection",statusCode="OK"}
            grpc_server_processing_duration_seconds_sum{application="square-grpc-service",method="Watch",methodType="SERVER_STREAMING",service="grpc.health.v1.Health",statusCode="OK"}
            grpc_server_processing_duration_seconds_sum{application="square-grpc-service",method="findSquareBiStream",methodType="BIDI_STREAMING",service="vinsmath.SquareRpc",statusCode="CANCELLED"}
            grpc_server_processing_duration_seconds_sum{application="square-grpc-service",method="findSquareBiStream",methodType="BIDI_STREAMING",service="vinsmath.SquareRpc",statusCode="OK"}
            grpc_server_processing_duration_seconds_sum{application="square-grpc-service",method="findSquareUnary",methodType="UNARY",service="vinsmath.SquareRpc",statusCode="OK"}
            grpc_server_requests_received_messages_total{application="square-grpc-service",method="Check",methodType="UNARY",service="grpc.health.v1.Health"}
            grpc_server_requests_received_messages_total{application="square-grpc-service",method="ServerReflectionInfo",methodType="BIDI_STREAMING",service="grpc.reflection.v1alpha.ServerReflection"}
            grpc_server_requests_received_messages_total{application="square-grpc-service",method="Watch",methodType="SERVER_STREAMING",service="grpc.health.v1.Health"}
            grpc_server_requests_received_messages_total{application="square-grpc-service",method="findSquareBiStream",methodType="BIDI_STREAMING",service="vinsmath.SquareRpc"}
            grpc_server_requests_received_messages_total{application="square-grpc-service",method="findSquareUnary",methodType="UNARY",service="vinsmath.SquareRpc"}
            grpc_server_responses_sent_messages_total{application="square-grpc-service",method="Check",methodType="UNARY",service="grpc.health.v1.Health"}
            grpc_server_responses_sent_messages_total{application="square-grpc-service",method="ServerReflectionInfo",methodType="BIDI_STREAMING",service="grpc.reflection.v1alpha.ServerReflection"}
            grpc_server_responses_sent_messages_total{application="square-grpc-service",method="Watch",methodType="SERVER_STREAMING",service="grpc.health.v1.Health"}
            grpc_server_responses_sent_messages_total{application="square-grpc-service",method="findSquareBiStream",methodType="BIDI_STREAMING",service="vinsmath.SquareRpc"}
            grpc_server_responses_sent_messages_total{application="square-grpc-service",method="findSquareUnary",methodType="UNARY",service="vinsmath.SquareRpc"}""";

    private static final String PINNED =
            """
            # TYPE grpc_server_active_seconds summary
            # TYPE grpc_server_active_seconds_max gauge
            # TYPE grpc_server_cancelled_total counter
            # TYPE grpc_server_received_total counter
            # TYPE grpc_server_seconds summary
            # TYPE grpc_server_seconds_max gauge
            # TYPE grpc_server_sent_total counter
            # TYPE http_server_requests_active_seconds summary
            # TYPE http_server_requests_active_seconds_max gauge
            # TYPE http_server_requests_seconds summary
            # TYPE http_server_requests_seconds_max gauge
            grpc_server_active_seconds_count{application="square-grpc-service",grpc_status_code="UNKNOWN",rpc_method="findSquareBiStream",rpc_service="vinsmath.SquareRpc",rpc_type="BIDI_STREAMING"}
            grpc_server_active_seconds_count{application="square-grpc-service",grpc_status_code="UNKNOWN",rpc_method="findSquareUnary",rpc_service="vinsmath.SquareRpc",rpc_type="UNARY"}
            grpc_server_active_seconds_max{application="square-grpc-service",grpc_status_code="UNKNOWN",rpc_method="findSquareBiStream",rpc_service="vinsmath.SquareRpc",rpc_type="BIDI_STREAMING"}
            grpc_server_active_seconds_max{application="square-grpc-service",grpc_status_code="UNKNOWN",rpc_method="findSquareUnary",rpc_service="vinsmath.SquareRpc",rpc_type="UNARY"}
            grpc_server_active_seconds_sum{application="square-grpc-service",grpc_status_code="UNKNOWN",rpc_method="findSquareBiStream",rpc_service="vinsmath.SquareRpc",rpc_type="BIDI_STREAMING"}
            grpc_server_active_seconds_sum{application="square-grpc-service",grpc_status_code="UNKNOWN",rpc_method="findSquareUnary",rpc_service="vinsmath.SquareRpc",rpc_type="UNARY"}
            grpc_server_cancelled_total{application="square-grpc-service",grpc_status_code="UNKNOWN",rpc_method="findSquareBiStream",rpc_service="vinsmath.SquareRpc",rpc_type="BIDI_STREAMING"}
            grpc_server_received_total{application="square-grpc-service",grpc_status_code="UNKNOWN",rpc_method="findSquareBiStream",rpc_service="vinsmath.SquareRpc",rpc_type="BIDI_STREAMING"}
            grpc_server_received_total{application="square-grpc-service",grpc_status_code="UNKNOWN",rpc_method="findSquareUnary",rpc_service="vinsmath.SquareRpc",rpc_type="UNARY"}
            grpc_server_seconds_count{application="square-grpc-service",error="none",grpc_status_code="OK",rpc_method="findSquareBiStream",rpc_service="vinsmath.SquareRpc",rpc_type="BIDI_STREAMING"}
            grpc_server_seconds_count{application="square-grpc-service",error="none",grpc_status_code="OK",rpc_method="findSquareUnary",rpc_service="vinsmath.SquareRpc",rpc_type="UNARY"}
            grpc_server_seconds_count{application="square-grpc-service",error="none",grpc_status_code="UNKNOWN",rpc_method="findSquareBiStream",rpc_service="vinsmath.SquareRpc",rpc_type="BIDI_STREAMING"}
            grpc_server_seconds_max{application="square-grpc-service",error="none",grpc_status_code="OK",rpc_method="findSquareBiStream",rpc_service="vinsmath.SquareRpc",rpc_type="BIDI_STREAMING"}
            grpc_server_seconds_max{application="square-grpc-service",error="none",grpc_status_code="OK",rpc_method="findSquareUnary",rpc_service="vinsmath.SquareRpc",rpc_type="UNARY"}
            grpc_server_seconds_max{application="square-grpc-service",error="none",grpc_status_code="UNKNOWN",rpc_method="findSquareBiStream",rpc_service="vinsmath.SquareRpc",rpc_type="BIDI_STREAMING"}
            grpc_server_seconds_sum{application="square-grpc-service",error="none",grpc_status_code="OK",rpc_method="findSquareBiStream",rpc_service="vinsmath.SquareRpc",rpc_type="BIDI_STREAMING"}
            grpc_server_seconds_sum{application="square-grpc-service",error="none",grpc_status_code="OK",rpc_method="findSquareUnary",rpc_service="vinsmath.SquareRpc",rpc_type="UNARY"}
            grpc_server_seconds_sum{application="square-grpc-service",error="none",grpc_status_code="UNKNOWN",rpc_method="findSquareBiStream",rpc_service="vinsmath.SquareRpc",rpc_type="BIDI_STREAMING"}
            grpc_server_sent_total{application="square-grpc-service",grpc_status_code="UNKNOWN",rpc_method="findSquareBiStream",rpc_service="vinsmath.SquareRpc",rpc_type="BIDI_STREAMING"}
            grpc_server_sent_total{application="square-grpc-service",grpc_status_code="UNKNOWN",rpc_method="findSquareUnary",rpc_service="vinsmath.SquareRpc",rpc_type="UNARY"}
            http_server_requests_active_seconds_count{application="square-grpc-service",exception="none",method="GET",outcome="SUCCESS",status="200",uri="UNKNOWN"}
            http_server_requests_active_seconds_max{application="square-grpc-service",exception="none",method="GET",outcome="SUCCESS",status="200",uri="UNKNOWN"}
            http_server_requests_active_seconds_sum{application="square-grpc-service",exception="none",method="GET",outcome="SUCCESS",status="200",uri="UNKNOWN"}
            http_server_requests_seconds_count{application="square-grpc-service",error="none",exception="none",method="GET",outcome="SUCCESS",status="200",uri="/actuator/health"}
            http_server_requests_seconds_count{application="square-grpc-service",error="none",exception="none",method="GET",outcome="SUCCESS",status="200",uri="/actuator/prometheus"}
            http_server_requests_seconds_max{application="square-grpc-service",error="none",exception="none",method="GET",outcome="SUCCESS",status="200",uri="/actuator/health"}
            http_server_requests_seconds_max{application="square-grpc-service",error="none",exception="none",method="GET",outcome="SUCCESS",status="200",uri="/actuator/prometheus"}
            http_server_requests_seconds_sum{application="square-grpc-service",error="none",exception="none",method="GET",outcome="SUCCESS",status="200",uri="/actuator/health"}
            http_server_requests_seconds_sum{application="square-grpc-service",error="none",exception="none",method="GET",outcome="SUCCESS",status="200",uri="/actuator/prometheus"}""";

    private long unary(int number) {
        return SquareRpcGrpc.newBlockingStub(channel)
                .withDeadlineAfter(5, TimeUnit.SECONDS)
                .findSquareUnary(Input.newBuilder().setNumber(number).build())
                .getResult();
    }

    private List<Long> stream(int... numbers) throws Exception {
        List<Long> answers = new CopyOnWriteArrayList<>();
        CompletableFuture<Void> done = new CompletableFuture<>();
        var requests = SquareRpcGrpc.newStub(channel)
                .withDeadlineAfter(5, TimeUnit.SECONDS)
                .findSquareBiStream(new io.grpc.stub.StreamObserver<>() {
                    @Override
                    public void onNext(Output output) {
                        answers.add(output.getResult());
                    }

                    @Override
                    public void onError(Throwable t) {
                        done.completeExceptionally(t);
                    }

                    @Override
                    public void onCompleted() {
                        done.complete(null);
                    }
                });
        for (int number : numbers) {
            requests.onNext(Input.newBuilder().setNumber(number).build());
        }
        requests.onCompleted();
        done.get(5, TimeUnit.SECONDS);
        return answers;
    }

    /** Two messages answered, then the client cancels the stream. */
    private void cancelledAfterTwoAnswers() throws Exception {
        CompletableFuture<Void> twoAnswers = new CompletableFuture<>();
        CompletableFuture<Status> closed = new CompletableFuture<>();
        List<Long> answers = new CopyOnWriteArrayList<>();
        @SuppressWarnings("unchecked")
        ClientCallStreamObserver<Input>[] requests = new ClientCallStreamObserver[1];
        SquareRpcGrpc.newStub(channel)
                .withDeadlineAfter(5, TimeUnit.SECONDS)
                .findSquareBiStream(new ClientResponseObserver<Input, Output>() {
                    @Override
                    public void beforeStart(ClientCallStreamObserver<Input> stream) {
                        requests[0] = stream;
                    }

                    @Override
                    public void onNext(Output output) {
                        answers.add(output.getResult());
                        if (answers.size() == 2) {
                            twoAnswers.complete(null);
                        }
                    }

                    @Override
                    public void onError(Throwable t) {
                        closed.complete(Status.fromThrowable(t));
                    }

                    @Override
                    public void onCompleted() {
                        closed.complete(Status.OK);
                    }
                });
        requests[0].onNext(Input.newBuilder().setNumber(2).build());
        requests[0].onNext(Input.newBuilder().setNumber(3).build());
        twoAnswers.get(5, TimeUnit.SECONDS);
        requests[0].cancel("the test cancels", null);
        assertThat(closed.get(5, TimeUnit.SECONDS).getCode()).isEqualTo(Status.Code.CANCELLED);
        assertThat(answers).containsExactly(4L, 9L);
    }

    /**
     * The server ends a call's observation after the client has its answer: wait until no call is active any more (so
     * no event of these calls can still come), then every series must have moved by exactly its delta.
     */
    private void assertCountedSince(PrometheusScrape before, Map<String, Double> deltas) throws Exception {
        PrometheusScrape after = awaitNoCallActive();
        assertThat(after.movedSince(before, deltas.keySet())).isEqualTo(deltas);
    }

    private PrometheusScrape awaitNoCallActive() throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        PrometheusScrape scrape = scrape();
        while (activeCalls(scrape) > 0 && System.nanoTime() < deadline) {
            Thread.sleep(20);
            scrape = scrape();
        }
        assertThat(activeCalls(scrape)).as("calls still active").isZero();
        return scrape;
    }

    private static double activeCalls(PrometheusScrape scrape) {
        return scrape.valueOrZero(started("grpc_server_active_seconds_count", STREAM))
                + scrape.valueOrZero(started("grpc_server_active_seconds_count", UNARY));
    }

    private PrometheusScrape scrape() {
        return PrometheusScrape.parse(http().get("/actuator/prometheus"));
    }

    private LocalHttp http() {
        return LocalHttp.on(port);
    }

    /** A series tagged as the call was when it started: its status is not known yet. */
    private static String started(String name, String method) {
        return name + "{application=\"square-grpc-service\",grpc_status_code=\"UNKNOWN\"," + call(method);
    }

    /** A series of the timer, tagged as the call was when it ended. */
    private static String ended(String name, String status, String method) {
        return name + "{application=\"square-grpc-service\",error=\"none\",grpc_status_code=\"" + status + "\","
                + call(method);
    }

    private static String call(String method) {
        return "rpc_method=\"" + method + "\",rpc_service=\"vinsmath.SquareRpc\",rpc_type=\""
                + (method.equals(UNARY) ? "UNARY" : "BIDI_STREAMING") + "\"}";
    }
}
