"""Charging a CPU profile's samples to layers (lab.layers), and the profile's table
(lab.experiments.profile.markdown)."""

import collections
import unittest

from lab.core.catalogue import AGGREGATOR, SQUARE_REST
from lab.core.catalogue import SQUARE_GRPC as GRPC
from lab.experiments import profile
from lab.measure import layers
from lab.results import report

OBSERVATION = "metering: Micrometer's observations"
TRACER = "metering: net.devh's stream tracer (gRPC A66 metrics)"


def stack(*frames):
    return list(frames)


class LayerTests(unittest.TestCase):
    def test_jdk_frames_are_charged_to_the_library_that_called_them(self):
        frames = stack(
            "java/lang/Thread.run",
            "io/grpc/netty/shaded/io/netty/util/Recycler$LocalPool.release",
            "java/lang/Thread.getState",
        )

        self.assertEqual(layers.layer(frames), "Netty's Recycler")

    def test_micrometers_machinery_is_charged_to_the_metering_layer_that_called_it(self):
        frames = stack(
            "io/grpc/internal/ServerImpl$JumpToApplicationThreadServerStreamListener.closed",
            "net/devh/boot/grpc/server/metrics/MetricsServerStreamTracers$ServerTracer.streamClosed",
            "io/micrometer/core/instrument/Timer$Builder.register",
            "io/micrometer/core/instrument/MeterRegistry.registerMeterIfNecessary",
            "java/util/concurrent/ConcurrentHashMap.get",
        )

        self.assertEqual(layers.layer(frames), TRACER)

    def test_an_interceptor_forwarding_to_the_transport_is_the_transports_cost(self):
        frames = stack(
            "io/micrometer/core/instrument/binder/grpc/ObservationGrpcServerCall.sendMessage",
            "io/grpc/internal/ServerCallImpl.sendMessage",
            "io/grpc/netty/shaded/io/netty/channel/AbstractChannelHandlerContext.write",
        )

        self.assertEqual(layers.layer(frames), "Netty")

    def test_the_observations_own_classes_and_our_cached_handler_are_one_layer(self):
        observation = stack(
            "io/micrometer/core/instrument/binder/grpc/ObservationGrpcServerInterceptor.interceptCall",
            "io/micrometer/observation/SimpleObservation.start",
            "io/micrometer/observation/Observation$Context.addLowCardinalityKeyValue",
            "java/util/concurrent/ConcurrentHashMap.putVal",
        )
        handler = stack(
            "io/micrometer/observation/SimpleObservation.stop",
            "io/github/squarelab/observation/CachedMeterObservationHandler.onStop",
            "io/micrometer/core/instrument/AbstractTimer.record",
        )

        self.assertEqual(layers.layer(observation), OBSERVATION)
        self.assertEqual(layers.layer(handler), OBSERVATION)

    def test_the_square_services_one_metering_layer_is_charged_its_meters_not_the_service(self):
        counting = stack(
            "io/grpc/internal/ServerCallImpl$ServerStreamListenerImpl.messagesAvailable",
            "io/github/squarelab/square/grpc/metering/MeteringInterceptor$MeteredListener.onMessage",
            "io/github/squarelab/square/grpc/metering/MeteredCall.messageReceived",
            "io/micrometer/core/instrument/cumulative/CumulativeCounter.increment",
            "java/util/concurrent/atomic/DoubleAdder.add",
        )
        squaring = stack(
            "io/grpc/ForwardingServerCallListener.onHalfClose",
            "io/github/squarelab/square/grpc/SquareRpcService.findSquareUnary",
        )

        self.assertEqual(layers.layer(counting), "metering: the gRPC square service's one layer")
        self.assertEqual(layers.layer(squaring), "ours: the service")

    def test_stacks_without_a_library_frame_are_the_jvms(self):
        self.assertEqual(
            layers.layer(stack("thread_native_entry", "VMThread::run", "DefNewGeneration::collect")), layers.GC
        )
        self.assertEqual(layers.layer(stack("thread_native_entry", "CompileBroker::compiler_thread_loop")), layers.JIT)
        self.assertEqual(layers.layer(stack("start_thread", "clone3_[k]")), "JVM and kernel, other")

    def test_netty_s_native_library_is_named_by_its_file(self):
        frames = stack(
            "/tmp/libio_grpc_netty_shaded_netty_transport_native_epoll_x86_641234.so (deleted)", "epoll_wait_[k]"
        )

        self.assertEqual(layers.layer(frames), "Netty's native epoll")

    def test_an_account_sums_the_samples_of_each_layer(self):
        lines = [
            "java/lang/Thread.run;io/grpc/netty/shaded/io/netty/channel/nio/NioEventLoop.run 30\n",
            "java/lang/Thread.run;io/micrometer/core/instrument/binder/grpc/ObservationGrpcServerInterceptor.interceptCall"
            " 10\n",
            "java/lang/Thread.run;io/grpc/netty/shaded/io/netty/buffer/PoolArena.allocate 60\n",
            "\n",
        ]

        by_layer = layers.account(lines)

        self.assertEqual(by_layer, collections.Counter({"Netty": 90, OBSERVATION: 10}))
        self.assertAlmostEqual(layers.metering_share(by_layer), 0.1)


class ProfileTableTests(unittest.TestCase):
    def render(self, rows):
        record = {
            "settings": {"requests": 1000, "concurrency": 100, "n": 1000, "warmup_s": 10, "java_opts": "-Xmx128m"},
            "rows": rows,
        }
        return report.fill("profile.md.j2", record=record, layers_table=profile.layers_table)

    def test_each_layer_is_its_share_of_samples_times_the_processes_cpu_per_call(self):
        row = {
            "path": "grpc/unary",
            "rps": 61.96,
            "us_per_call": {GRPC: 10.0, AGGREGATOR: 8.0},
            "samples": {
                GRPC: {"Netty": 120, OBSERVATION: 60, "logging": 1, "grpc-java": 19},
                AGGREGATOR: {"Netty": 50, "Reactor": 50},
            },
        }

        text = self.render([row])

        self.assertIn(
            "### grpc/unary: 62.0 req/s while profiled; CPU per call square-grpc-service 10.00 us, "
            "aggregator-service 8.00 us",
            text,
        )
        self.assertIn("| Netty | 60.0 %, 6.00 | 50.0 %, 4.00 |", text)
        self.assertIn("| metering: Micrometer's observations | 30.0 %, 3.00 | - |", text)
        self.assertIn("| layers under 1 % | 0.5 %, 0.05 | - |", text)
        self.assertIn("| **metering, all layers** | 30.0 %, 3.00 | - |", text)
        self.assertNotIn("| logging |", text)

    def test_a_rest_path_is_profiled_in_the_rest_square_service_and_the_aggregator(self):
        self.assertEqual(profile.profiled("rest/h2c"), (SQUARE_REST, AGGREGATOR))
        self.assertEqual(profile.profiled("grpc/pingpong"), (GRPC, AGGREGATOR))
        row = {
            "path": "rest/unary",
            "rps": 24.0,
            "us_per_call": {SQUARE_REST: 40.0, AGGREGATOR: 30.0},
            "samples": {SQUARE_REST: {"Tomcat": 3, "Spring": 1}, AGGREGATOR: {"Tomcat": 1, "Reactor": 1}},
        }

        text = self.render([row])

        self.assertIn(
            "| layer | square-rest-service share, us per call | aggregator-service share, us per call |", text
        )
        self.assertIn("| Tomcat | 75.0 %, 30.00 | 50.0 %, 15.00 |", text)


if __name__ == "__main__":
    unittest.main()
