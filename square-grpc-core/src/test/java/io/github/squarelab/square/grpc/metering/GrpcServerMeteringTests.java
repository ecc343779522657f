package io.github.squarelab.square.grpc.metering;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.squarelab.proto.Input;
import io.github.squarelab.proto.Output;
import io.github.squarelab.proto.SquareRpcGrpc;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.StreamObserver;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The one metering layer on an in-process server: one object per call shared by the stream's tracer and the
 * interceptor, each family recorded once, errors, unknown methods, meters removed from the registry, and the families
 * it leaves to Micrometer's observation when that runs. ObservationMetricsTests pins the exported names and tags.
 */
class GrpcServerMeteringTests {

    private static final String UNARY = "vinsmath.SquareRpc/findSquareUnary";

    private final MeterRegistry registry = new SimpleMeterRegistry();
    private final List<MeteredCall> seenByTheService = new CopyOnWriteArrayList<>();
    private Server server;
    private ManagedChannel channel;

    /** Squares, and refuses a negative number with INVALID_ARGUMENT and the exception that says why. */
    private static final class SquaringOrRefusing extends SquareRpcGrpc.SquareRpcImplBase {
        @Override
        public void findSquareUnary(Input request, StreamObserver<Output> answer) {
            if (request.getNumber() < 0) {
                answer.onError(Status.INVALID_ARGUMENT
                        .withDescription("negative")
                        .withCause(new IllegalArgumentException("negative"))
                        .asRuntimeException());
                return;
            }
            answer.onNext(Output.newBuilder()
                    .setNumber(request.getNumber())
                    .setResult((long) request.getNumber() * request.getNumber())
                    .build());
            answer.onCompleted();
        }
    }

    /** Set to make the next call's start throw, inside the metering interceptor. */
    private volatile Error startFailure;

    /**
     * Inside the metering interceptor: records which metered call the service's context carries, and throws
     * {@link #startFailure} if set.
     */
    private final ServerInterceptor contextReader = new ServerInterceptor() {
        @Override
        public <Q, A> ServerCall.Listener<Q> interceptCall(
                ServerCall<Q, A> call, Metadata headers, ServerCallHandler<Q, A> next) {
            seenByTheService.add(MeteredCall.CURRENT.get());
            if (startFailure != null) {
                throw startFailure;
            }
            return next.startCall(call, headers);
        }
    };

    private void start(boolean observe, boolean longTaskTimers) throws Exception {
        var service = new SquaringOrRefusing();
        GrpcServerMeters meters =
                new GrpcServerMeters(registry, List.of(service.bindService()), observe, longTaskTimers);
        String name = InProcessServerBuilder.generateName();
        server = InProcessServerBuilder.forName(name)
                .directExecutor()
                .addService(ServerInterceptors.intercept(service, contextReader, new MeteringInterceptor(meters)))
                .addStreamTracerFactory(new MeteredCall.Factory(meters))
                .build()
                .start();
        channel = InProcessChannelBuilder.forName(name).directExecutor().build();
    }

    @AfterEach
    void shutDown() throws Exception {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }

    @Test
    void beforeAnyCallOnlyTheCollectingMetersOfEveryBoundMethodExist() throws Exception {
        start(true, true);

        assertThat(registry.getMeters().stream()
                        .map(meter ->
                                meter.getId().getName() + " " + meter.getId().getTag("method") + " "
                                        + meter.getId().getTag("statusCode")))
                .containsExactlyInAnyOrder(
                        "grpc.server.requests.received findSquareUnary null",
                        "grpc.server.responses.sent findSquareUnary null",
                        "grpc.server.processing.duration findSquareUnary OK",
                        "grpc.server.requests.received findSquareBiStream null",
                        "grpc.server.responses.sent findSquareBiStream null",
                        "grpc.server.processing.duration findSquareBiStream OK");
    }

    @Test
    void theServiceSeesTheMeteredCallItsStreamsTracerMade() throws Exception {
        start(true, true);

        assertThat(square(7)).isEqualTo(49);
        assertThat(square(8)).isEqualTo(64);

        assertThat(seenByTheService).hasSize(2).doesNotContainNull();
        assertThat(seenByTheService.get(0)).isNotSameAs(seenByTheService.get(1));
        assertThat(registry.get("grpc.server.call.started").counter().count()).isEqualTo(2.0);
        assertThat(a66Duration("OK").count()).isEqualTo(2);
    }

    @Test
    void aCallEndedWithAnErrorIsRecordedUnderItsStatusInEveryFamilyAndUnderItsCauseInTheObservations()
            throws Exception {
        start(true, true);

        assertThatThrownBy(() -> square(-3)).isInstanceOfSatisfying(StatusRuntimeException.class, e -> assertThat(
                        e.getStatus().getCode())
                .isEqualTo(Status.Code.INVALID_ARGUMENT));

        assertThat(registry.get("grpc.server")
                        .tags("grpc.status_code", "INVALID_ARGUMENT", "error", "IllegalArgumentException")
                        .timer()
                        .count())
                .isEqualTo(1);
        assertThat(registry.get("grpc.server.processing.duration")
                        .tags("method", "findSquareUnary", "statusCode", "INVALID_ARGUMENT")
                        .timer()
                        .count())
                .isEqualTo(1);
        assertThat(a66Duration("INVALID_ARGUMENT").count()).isEqualTo(1);
        assertThat(registry.get("grpc.server.received").counter().count()).isEqualTo(1.0);
        assertThat(registry.find("grpc.server.sent").counter()).isNull();
        assertThat(registry.get("grpc.server.active").longTaskTimer().activeTasks())
                .isZero();
    }

    /** Micrometer's observation left such a call active for good; the layer ends it, tagged with what was thrown. */
    @Test
    void aCallWhoseStartThrowsAnErrorIsTimedWithThatErrorAndNoLongerActive() throws Exception {
        start(true, true);
        startFailure = new AssertionError("the start fails");

        assertThatThrownBy(() -> square(6)).isInstanceOfSatisfying(StatusRuntimeException.class, e -> assertThat(
                        e.getStatus().getCode())
                .isEqualTo(Status.Code.UNKNOWN));

        assertThat(registry.get("grpc.server")
                        .tags("grpc.status_code", "UNKNOWN", "error", "AssertionError")
                        .timer()
                        .count())
                .isEqualTo(1);
        assertThat(registry.get("grpc.server.active").longTaskTimer().activeTasks())
                .isZero();
        assertThat(registry.find("grpc.server.received").meters()).isEmpty();
    }

    @Test
    void aMethodTheServerDoesNotServeIsTimedUnimplementedAndNotCounted() throws Exception {
        start(true, true);
        MethodDescriptor<Input, Output> unknown = SquareRpcGrpc.getFindSquareUnaryMethod().toBuilder()
                .setFullMethodName("vinsmath.SquareRpc/findCube")
                .build();

        assertThatThrownBy(() -> ClientCalls.blockingUnaryCall(
                        channel,
                        unknown,
                        CallOptions.DEFAULT,
                        Input.newBuilder().setNumber(2).build()))
                .isInstanceOfSatisfying(
                        StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNIMPLEMENTED));

        assertThat(registry.get("grpc.server.call.duration")
                        .tags("grpc.method", "vinsmath.SquareRpc/findCube", "grpc.status", "UNIMPLEMENTED")
                        .timer()
                        .count())
                .isEqualTo(1);
        assertThat(registry.find("grpc.server.call.started").counters()).isEmpty();
        assertThat(registry.find("grpc.server").timers()).isEmpty();
        assertThat(seenByTheService).isEmpty();
    }

    @Test
    void aMeterRemovedFromTheRegistryIsRegisteredAgainAtTheNextCall() throws Exception {
        start(true, true);
        square(2);
        Meter removed = registry.remove(processing("OK"));
        assertThat(removed).isNotNull();

        square(3);

        assertThat(processing("OK")).isNotSameAs(removed);
        assertThat(processing("OK").count()).isEqualTo(1);
        assertThat(registry.get("grpc.server.requests.received")
                        .tag("method", "findSquareUnary")
                        .counter()
                        .count())
                .isEqualTo(2.0);
    }

    @Test
    void besideMicrometersObservationTheLayerLeavesTheObservationsMetersToIt() throws Exception {
        start(false, true);

        square(4);

        assertThat(registry.find("grpc.server").meters()).isEmpty();
        assertThat(registry.find("grpc.server.active").meters()).isEmpty();
        assertThat(registry.find("grpc.server.received").meters()).isEmpty();
        assertThat(processing("OK").count()).isEqualTo(1);
        assertThat(a66Duration("OK").count()).isEqualTo(1);
    }

    @Test
    void withoutLongTaskTimersThereIsNoActiveMeter() throws Exception {
        start(true, false);

        square(5);

        assertThat(registry.find("grpc.server.active").meters()).isEmpty();
        assertThat(registry.get("grpc.server")
                        .tag("grpc.status_code", "OK")
                        .timer()
                        .count())
                .isEqualTo(1);
    }

    private long square(int number) {
        return SquareRpcGrpc.newBlockingStub(channel)
                .withDeadlineAfter(5, TimeUnit.SECONDS)
                .findSquareUnary(Input.newBuilder().setNumber(number).build())
                .getResult();
    }

    private Timer processing(String status) {
        return registry.get("grpc.server.processing.duration")
                .tags("method", "findSquareUnary", "statusCode", status)
                .timer();
    }

    private Timer a66Duration(String status) {
        return registry.get("grpc.server.call.duration")
                .tags("grpc.method", UNARY, "grpc.status", status)
                .timer();
    }
}
