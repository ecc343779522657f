"""Where a service's CPU goes, by layer, from a collapsed CPU profile (async-profiler's `collapsed` output: one line
per distinct stack, frames from the thread's root to the leaf separated by `;`, then the sample count).

A sample belongs to the layer of its first frame, leaf upwards, that is not the JDK's: a ConcurrentHashMap.put
called by Micrometer's observation is the observation's cost, a Thread.getState called by Netty's Recycler the
Recycler's. Micrometer's own registry, meters and Prometheus classes are passed over too, up to the interceptor or
tracer that called them, so that each metering layer is charged what it does per call. A stack with no frame outside
the JDK is the JVM's own work: its collector or its JIT compilers.
"""

import collections
from typing import Counter, Iterable, List, Sequence, Tuple

JDK = ("java/", "javax/", "jdk/", "sun/", "com/sun/")

# Micrometer's machinery, charged to the metering layer that called it.
METER_MACHINERY = ("io/micrometer/", "io/prometheus/")

# The metering layers, by the classes that call into that machinery.
METERING = (
    ("io/github/squarelab/square/grpc/metering", "metering: the gRPC square service's one layer"),
    ("io/micrometer/core/instrument/binder/grpc/Observation", "metering: Micrometer's observations"),
    # Our meter handler of every observation: the HTTP server's and client's, and the gRPC one where it runs.
    ("io/github/squarelab/observation", "metering: Micrometer's observations"),
    (
        "io/micrometer/core/instrument/binder/grpc/MetricCollecting",
        "metering: Micrometer's MetricCollecting interceptor",
    ),
    (
        "io/micrometer/core/instrument/binder/grpc/AbstractMetricCollecting",
        "metering: Micrometer's MetricCollecting interceptor",
    ),
    ("net/devh/boot/grpc/server/metrics", "metering: net.devh's stream tracer (gRPC A66 metrics)"),
    ("net/devh/boot/grpc/client/metrics", "metering: net.devh's stream tracer (gRPC A66 metrics)"),
    ("org/springframework/boot/actuate", "metering: the actuator's scrape"),
)

# Every other layer, by the first frame outside the JDK; the first prefix that matches decides.
LAYERS = (
    ("io/grpc/netty/shaded/io/netty/util/ResourceLeakDetector", "Netty's leak detector"),
    ("io/netty/util/ResourceLeakDetector", "Netty's leak detector"),
    ("io/grpc/netty/shaded/io/netty/util/Recycler", "Netty's Recycler"),
    ("io/netty/util/Recycler", "Netty's Recycler"),
    ("io/grpc/netty/shaded/io/netty", "Netty"),
    ("io/netty", "Netty"),
    ("io/grpc/netty", "grpc-java's Netty transport"),
    ("io/grpc/", "grpc-java"),
    ("com/google/protobuf", "protobuf"),
    ("net/devh/boot/grpc/server/scope", "net.devh's request scope"),
    ("net/devh", "net.devh, other"),
    ("io/github/squarelab/aggregator", "ours: the aggregator"),
    ("io/github/squarelab", "ours: the service"),
    ("reactor/", "Reactor"),
    ("org/apache/catalina", "Tomcat"),
    ("org/apache/coyote", "Tomcat"),
    ("org/apache/tomcat", "Tomcat"),
    ("org/springframework", "Spring"),
    ("com/fasterxml/jackson", "Jackson"),
    ("ch/qos/logback", "logging"),
    ("org/slf4j", "logging"),
)

GC = "JVM: garbage collection"
JIT = "JVM: JIT compilers"
_GC_WORDS = ("GCTask", "DefNew", "SerialHeap", "G1", "GenCollect", "CollectedHeap", "OopOopIterate", "ParallelScavenge")
_JIT_WORDS = ("CompileBroker", "C2Compiler", "Compilation", "Compile::")


def _java(frame: str) -> bool:
    return "/" in frame and not frame.endswith("_[k]")


def layer(frames: Sequence[str]) -> str:
    """The layer one sample (its frames, root first) is charged to."""
    in_machinery = False
    for frame in reversed(frames):
        if "netty_transport_native" in frame:
            # Netty's epoll library, unpacked to a temporary file: a path, not a class.
            return "Netty's native epoll"
        if not _java(frame) or frame.startswith(JDK):
            continue
        if frame.startswith(METER_MACHINERY) or in_machinery:
            for prefix, name in METERING:
                if frame.startswith(prefix):
                    return name
            if frame.startswith(METER_MACHINERY):
                in_machinery = True
                continue
            return "metering: Micrometer, called by " + _package(frame)
        for prefix, name in METERING + LAYERS:
            if frame.startswith(prefix):
                return name
        return "other: " + _package(frame)
    if in_machinery:
        return "metering: Micrometer, no caller outside it"
    joined = ";".join(frames)
    if any(word in joined for word in _GC_WORDS):
        return GC
    if any(word in joined for word in _JIT_WORDS):
        return JIT
    if any(frame.startswith(JDK) for frame in frames):
        return "the JDK"
    return "JVM and kernel, other"


def _package(frame: str) -> str:
    return "/".join(frame.split("/")[:3])


def parse(lines: Iterable[str]) -> Iterable[Tuple[List[str], int]]:
    """(frames, samples) of each line of a collapsed profile."""
    for line in lines:
        stack, _, count = line.rstrip("\n").rpartition(" ")
        if stack and count.isdigit():
            yield stack.split(";"), int(count)


def account(lines: Iterable[str]) -> Counter[str]:
    """Samples per layer."""
    by_layer: Counter[str] = collections.Counter()
    for frames, samples in parse(lines):
        by_layer[layer(frames)] += samples
    return by_layer


def metering_share(by_layer: Counter[str]) -> float:
    total = sum(by_layer.values())
    return sum(n for name, n in by_layer.items() if name.startswith("metering")) / total if total else 0.0
