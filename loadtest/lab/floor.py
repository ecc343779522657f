"""The transport floor beside the paths: the bare transports of transport-floor/ (no Spring on the path), run
by the lab after the paths, with the services stopped, on the same machine and with the window the aggregator
had in each measured combination; and each path's fraction of its floor.

The window of a combination (path, n, concurrency, TLS mode) follows from the aggregator's `in-flight` and
`rest-max-connections`, which the lab reads from the running aggregator's /actuator/info and records in
results.json (settings.aggregator):

- grpc/unary -> grpc_unary: concurrency x min(n, in-flight) calls in flight on one channel. Each request keeps
  at most in-flight of its n calls in flight, and ab keeps `concurrency` requests at the aggregator.
- rest/unary -> rest_unary: as many keep-alive connections as there can be calls, up to the pools' size:
  min(rest-max-connections x rest-replicas, concurrency x min(n, in-flight)); one call on each.
- rest/h2c -> rest_h2c: the aggregator's HTTP/2 connections (rest-h2c-connections x rest-replicas), carrying
  concurrency x min(n, in-flight) calls in flight between them, at most rest-h2c-max-streams on each.
- grpc/stream -> grpc_stream: concurrency streams (one per request), n messages on each.
- grpc/pingpong -> grpc_pingpong: concurrency streams, n messages on each, one in flight on each.

n = 0 costs no downstream call, and the rest/square baseline has no aggregator: neither has a floor.

Under TLS (TLS="off on mtls"), each mode has its own floor: the same windows over TLS or mutual TLS, with the run's
certificates and the TLS_PROVIDER the services had (BoringSSL, or the JDK's SSLEngine), and each TLS stack's runs are
compared with their mode's floor.

Each run starts a bare server (`server grpc|http`), waits for its "listening on" line, runs the client against
it, and reads the server's CPU time from /proc the moment the client says its measured window opens and closes.
"""

import json
import os
import subprocess
import threading
import time
from dataclasses import asdict, dataclass
from typing import IO, Any, Callable, Dict, List, Optional, Tuple

from . import catalogue, cpu, results, tls
from . import repeats as repeats_of
from .errors import FloorError
from .processes import Processes, java_command, log_tail, wait_until

GOAL = 0.6
# A bare server prints its port within this long, or the run fails.
SERVER_START_S = 60.0
# Besides its warm-up and measured window, a client may take this long: its JVM's start, its wait for a first
# answer and its end of run (the client's own FIRST_ANSWER_TIMEOUT and DRAIN_TIMEOUT, 30 s and 10 s), with room.
CLIENT_ALLOWANCE_S = 90.0
# The floor's servers answer no request after the client is done: a short grace is enough to stop them.
SERVER_STOP_GRACE_S = 5.0
SERVER_KIND = {
    "rest_unary": "http",
    "rest_h2c": "http",
    "grpc_unary": "grpc",
    "grpc_stream": "grpc",
    "grpc_pingpong": "grpc",
}
# The window's fields each transport's client takes, and reports back in its settings.
WINDOW_FIELDS = {
    "rest_unary": ("connections",),
    "rest_h2c": ("connections", "streams"),
    "grpc_unary": ("in_flight",),
    "grpc_stream": ("streams", "messages_per_stream"),
    "grpc_pingpong": ("streams", "messages_per_stream"),
}


def aggregator_settings(info: Dict) -> Dict[str, int]:
    """What shapes the aggregator's windows, from its /actuator/info document."""
    try:
        settings = info["aggregator"]
        found = {
            "in_flight": int(settings["in-flight"]),
            "rest_max_connections": int(settings["rest-max-connections"]),
            "rest_replicas": int(settings["rest-replicas"]),
        }
        for key in ("rest-h2c-connections", "rest-h2c-max-streams"):
            if key in settings:
                found[key.replace("-", "_")] = int(settings[key])
        return found
    except (KeyError, TypeError, ValueError):
        raise FloorError(
            "the aggregator's /actuator/info has no aggregator in-flight, rest-max-connections and "
            "rest-replicas (an aggregator jar from before it said them?): %r" % (info,)
        ) from None


@dataclass(frozen=True)
class Window:
    """What the floor keeps in flight for one transport: the aggregator's window in one combination."""

    transport: str
    in_flight: Optional[int] = None  # grpc_unary: calls in flight on the one channel
    connections: Optional[int] = None  # rest_unary: keep-alive connections, one call on each; rest_h2c: HTTP/2
    streams: Optional[int] = None  # grpc_stream, grpc_pingpong: bidi streams; rest_h2c: calls in flight
    messages_per_stream: Optional[int] = None  # grpc_stream, grpc_pingpong: messages on each stream before a new one
    tls: Optional[str] = None  # "on" or "mtls" over TLS; None in plaintext

    def as_dict(self) -> Dict:
        return {key: value for key, value in asdict(self).items() if value is not None and key != "transport"}

    @classmethod
    def from_record(cls, transport: str, window: Dict) -> "Window":
        return cls(transport, **window)

    def slug(self) -> str:
        """The name of the run's folder under floor/, e.g. grpc_stream_s100_m1000."""
        letters = {"in_flight": "i", "connections": "c", "streams": "s", "messages_per_stream": "m"}
        sizes = ["%s%d" % (letters[key], value) for key, value in self.as_dict().items() if key != "tls"]
        return "_".join([self.transport] + sizes + ([self.tls] if self.tls else []))

    def __post_init__(self) -> None:
        if self.transport not in SERVER_KIND:
            raise FloorError(
                "a floor run of transport %r: results from before the transports were named "
                "rest_unary, grpc_unary and grpc_stream; measure again" % self.transport
            )

    def describe(self) -> str:
        return self._size() + (" · %s" % catalogue.TLS_NAMES[self.tls] if self.tls else "")

    def _size(self) -> str:
        # __post_init__ has checked that the transport's fields are there.
        if self.transport == "grpc_unary":
            return "%s calls in flight" % self.in_flight
        if self.transport == "rest_unary":
            return "%s connections" % self.connections
        if self.transport == "rest_h2c":
            return "%s calls in flight on %s connections" % (self.streams, self.connections)
        return "%s streams × %s messages%s" % (
            self.streams,
            self.messages_per_stream,
            ", one at a time" if self.transport == "grpc_pingpong" else "",
        )

    def client_arguments(self) -> List[str]:
        """The floor client's options for this window: --in-flight, --connections, --streams, --messages."""
        options = {
            "in_flight": "--in-flight",
            "connections": "--connections",
            "streams": "--streams",
            "messages_per_stream": "--messages",
        }
        return [item for key in WINDOW_FIELDS[self.transport] for item in (options[key], str(getattr(self, key)))]

    def check(self, run_settings: Dict) -> List[str]:
        """The differences between this window and the settings a floor run says it used."""
        reported = WINDOW_FIELDS[self.transport]
        return [
            "the floor ran with %s=%s, the aggregator's window is %s" % (key, run_settings.get(key), getattr(self, key))
            for key in reported
            if run_settings.get(key) != getattr(self, key)
        ]


def window_for(
    path_name: str, n: int, concurrency: int, aggregator: Dict[str, int], mode: Optional[str] = None
) -> Optional[Window]:
    """The floor window of one measured combination (over TLS in mode "on" or "mtls"), or None when the path has no
    floor."""
    transport = catalogue.ALL[path_name].transport
    if transport is None or n < 1:
        return None
    calls = concurrency * min(n, aggregator["in_flight"])
    if transport == "grpc_unary":
        return Window(transport, in_flight=calls, tls=mode)
    if transport == "rest_unary":
        # A pool of rest-max-connections per replica.
        pool = aggregator["rest_max_connections"] * aggregator["rest_replicas"]
        return Window(transport, connections=min(pool, calls), tls=mode)
    if transport == "rest_h2c":
        if aggregator.get("rest_h2c_connections") is None:
            raise FloorError(
                "the aggregator's settings have no rest-h2c-connections (an aggregator jar from before "
                "rest/h2c?), so the rest_h2c floor's window is unknown"
            )
        connections = aggregator["rest_h2c_connections"] * aggregator["rest_replicas"]
        # Calls beyond what the connections may carry at once wait in the aggregator's pool.
        streams = min(calls, connections * aggregator.get("rest_h2c_max_streams", calls))
        return Window(transport, connections=min(connections, calls), streams=streams, tls=mode)
    return Window(transport, streams=concurrency, messages_per_stream=n, tls=mode)


Combination = Tuple[str, int, int, Optional[str]]


def mode_of(settings_tls: str) -> Optional[str]:
    """A TLS setting ("off", "on", "mtls") as a window's tls: None in plaintext."""
    return None if settings_tls == catalogue.PLAINTEXT else settings_tls


def combination(run: Dict, settings: Dict) -> Combination:
    """A measured run's combination: (path, n, concurrency, the TLS mode of its stack, None in plaintext)."""
    entry = results.stack_entry(run, settings)
    return run["path"], run["n"], run["concurrency"], mode_of(entry.get("tls", catalogue.PLAINTEXT))


def plan(settings: Dict) -> Tuple[List[Window], Dict[Combination, Window]]:
    """(each distinct window once, in the order the paths ran, TLS mode by mode; the window of every combination
    (path, n, concurrency, TLS mode) that has one).

    The bare transports carry the article's small call on loopback: only the runs of the small payload on loopback
    (compared_with_floor) have a floor, and without such runs there is none."""
    aggregator = settings.get("aggregator")
    windows: List[Window] = []
    by_combination: Dict[Combination, Window] = {}
    if catalogue.SMALL not in (settings.get("payload") or [catalogue.SMALL]) or catalogue.LOOPBACK not in (
        settings.get("network") or [catalogue.LOOPBACK]
    ):
        return windows, by_combination
    for mode in [mode_of(setting) for setting in settings.get("tls") or [catalogue.PLAINTEXT]]:
        for path_name in settings["paths"]:
            for n in settings["n"]:
                for concurrency in settings["concurrency"]:
                    if aggregator is None and catalogue.ALL[path_name].transport is not None:
                        raise FloorError(
                            "results.json records no aggregator settings (settings.aggregator), so the "
                            "floor's windows are unknown"
                        )
                    window = window_for(path_name, n, concurrency, aggregator or {}, mode)
                    if window is None:
                        continue
                    by_combination[(path_name, n, concurrency, mode)] = window
                    if window not in windows:
                        windows.append(window)
    return windows, by_combination


@dataclass(frozen=True)
class Jvm:
    """How the floor's JVMs start: the jar, the java executable, and the services' JVM options."""

    jar: str
    java: str
    java_opts: str

    def command(self, *arguments: str) -> List[str]:
        return java_command(self.java, self.java_opts, self.jar, arguments)


@dataclass(frozen=True)
class Encryption:
    """What the floor's TLS windows are encrypted with: the run's certificates and the services' TLS_PROVIDER."""

    certificates: Optional[tls.Certificates]
    provider: str = "openssl"

    def server_arguments(self, mode: str) -> List[str]:
        found = self._found(mode)
        arguments = ["--tls-cert", found.path("server.pem"), "--tls-key", found.path("server.key")]
        return arguments + (["--tls-client-ca", found.path("ca.pem")] if mode == "mtls" else [])

    def client_arguments(self, mode: str) -> List[str]:
        found = self._found(mode)
        arguments = ["--tls-ca", found.path("ca.pem")]
        return arguments + (
            ["--tls-cert", found.path("client.pem"), "--tls-key", found.path("client.key")] if mode == "mtls" else []
        )

    def jvm(self, jvm: "Jvm") -> "Jvm":
        """The floor's JVMs on the provider asked for: Netty's own switch off OpenSSL, for its plain and its
        grpc-netty-shaded copy, as lab.tls gives the services."""
        if self.provider != "jdk":
            return jvm
        switches = " ".join(sorted(set(tls.NO_OPENSSL.values())))
        return Jvm(jvm.jar, jvm.java, (jvm.java_opts + " " + switches).strip())

    def _found(self, mode: str) -> tls.Certificates:
        if self.certificates is None:
            raise FloorError("a floor window over %s without the run's certificates" % catalogue.TLS_NAMES[mode])
        return self.certificates


PLAINTEXT_ONLY = Encryption(None)


def run_window(
    window: Window,
    folder: str,
    jvm: Jvm,
    warmup_s: float,
    duration_s: float,
    processes: Processes,
    encryption: Encryption = PLAINTEXT_ONLY,
) -> Dict:
    """Runs the floor for one window (its logs into folder); the run's record."""
    os.makedirs(folder, exist_ok=True)
    record: Dict[str, Any] = {
        "transport": window.transport,
        "window": window.as_dict(),
        "folder": os.path.join("floor", os.path.basename(folder)),
    }
    started = time.monotonic()
    try:
        record.update(_measure(window, folder, jvm, warmup_s, duration_s, processes, encryption))
    except FloorError as error:
        record["error"] = str(error)
    record["wall_seconds"] = round(time.monotonic() - started, 1)
    if "error" not in record:
        problems = window.check(record.get("settings") or {})
        if problems:
            record["error"] = "; ".join(problems)
        elif not record.get("calls_per_second"):
            record["error"] = "the %s floor made no calls" % window.transport
    record["floor_settings"] = {
        "warmup_s": warmup_s,
        "duration_s": duration_s,
        "java_opts": jvm.java_opts,
        "processors": os.cpu_count(),
    }
    return record


def _measure(
    window: Window,
    folder: str,
    jvm: Jvm,
    warmup_s: float,
    duration_s: float,
    processes: Processes,
    encryption: Encryption,
) -> Dict:
    if window.tls:
        jvm = encryption.jvm(jvm)
    server_log = os.path.join(folder, "server.log")
    server = processes.start(
        jvm.command(
            "server",
            SERVER_KIND[window.transport],
            "--host",
            "127.0.0.1",
            "--port",
            "0",
            *(encryption.server_arguments(window.tls) if window.tls else []),
        ),
        log_path=server_log,
        stdout=subprocess.PIPE,
        side="services",
    )
    try:
        port, said = _await_port(server, server_log)
        client_tls = encryption.client_arguments(window.tls) if window.tls else []
        run = _run_client(window, folder, jvm, port, server.pid, warmup_s, duration_s, processes, client_tls)
    finally:
        processes.stop([server], grace_s=SERVER_STOP_GRACE_S)
        _pipe(server.stdout).close()
    if window.tls:
        run["tls"] = _tls_record(window, run.get("tls") or {}, said, jvm)
    return run


def _tls_record(window: Window, client: Dict, said: List[str], jvm: Jvm) -> Dict:
    """A TLS window's record: its mode, the server's provider (from its "tls MODE with PROVIDER" line), the client's,
    what the client's handshake agreed and the JVM options they ran with."""
    mode = window.tls or catalogue.PLAINTEXT
    prefix = "tls %s with " % mode
    server_provider = next((line[len(prefix) :] for line in said if line.startswith(prefix)), None)
    if server_provider is None:
        raise FloorError("the floor's server did not say it serves %s" % catalogue.TLS_NAMES[mode])
    if client.get("mode") != mode:
        raise FloorError("the floor's client ran %s, the window is %s" % (client.get("mode") or "in plaintext", mode))
    return {
        "mode": mode,
        "server_provider": server_provider,
        "client_provider": client.get("provider"),
        "protocol": client.get("protocol"),
        "cipher": client.get("cipher"),
        "alpn": client.get("alpn"),
        "java_opts": jvm.java_opts,
    }


def _await_port(server: subprocess.Popen, server_log: str) -> Tuple[int, List[str]]:
    """The port the server prints it listens on, and the lines it printed up to it."""
    lines: List[Optional[str]] = []
    threading.Thread(target=_lines_into, args=(server.stdout, lines), daemon=True).start()

    def listening() -> bool:
        # Read in order: a port printed before the server exited still counts.
        for line in list(lines):
            if line is None:
                raise FloorError("the floor's server exited before listening: %s" % tail(server_log, 3))
            if line.startswith("listening on 127.0.0.1:"):
                return True
        return False

    if not wait_until(listening, SERVER_START_S, 0.05):
        raise FloorError("the floor's server was not listening after %.0f s" % SERVER_START_S)
    said = [line for line in list(lines) if line]
    return next(int(line.rsplit(":", 1)[1]) for line in said if line.startswith("listening on 127.0.0.1:")), said


def _lines_into(stream, lines: List[Optional[str]]) -> None:
    for line in stream:
        lines.append(line.strip())
    lines.append(None)


def _run_client(
    window: Window,
    folder: str,
    jvm: Jvm,
    port: int,
    server_pid: int,
    warmup_s: float,
    duration_s: float,
    processes: Processes,
    client_tls: List[str],
) -> Dict:
    """Runs the client; the server's CPU is read the moment the client opens and closes its measured window."""
    client = processes.start(
        jvm.command(
            "client",
            window.transport,
            "--target",
            "127.0.0.1:%d" % port,
            *window.client_arguments(),
            "--warmup",
            "%g" % warmup_s,
            "--duration",
            "%g" % duration_s,
            *client_tls,
        ),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        side="load_generator",
    )
    limit_s = warmup_s + duration_s + CLIENT_ALLOWANCE_S
    timed_out = threading.Event()

    def stop_hung_client() -> None:
        timed_out.set()
        processes.stop([client], grace_s=SERVER_STOP_GRACE_S)

    timer = threading.Timer(limit_s, stop_hung_client)
    timer.start()
    output: List[str] = []
    client_out, client_err = _pipe(client.stdout), _pipe(client.stderr)
    reader = threading.Thread(target=lambda: output.append(client_out.read()), daemon=True)
    reader.start()
    marks: Dict[str, Tuple[int, Optional[float], cpu.Sample]] = {}
    try:
        with open(os.path.join(folder, "client.log"), "w") as log:
            for line in client_err:
                log.write(line)
                for mark in ("floor: measuring", "floor: measured"):
                    if line.startswith(mark) and mark not in marks:
                        marks[mark] = (
                            cpu.process_ticks(server_pid),
                            (cpu.load_average() or (None,))[0],
                            cpu.take_sample({}),
                        )
        status = client.wait()
    finally:
        timer.cancel()
    reader.join()
    client_out.close()
    client_err.close()
    if timed_out.is_set():
        raise FloorError(
            "the %s client had not finished after %.0f s (its warm-up, its measured window and %.0f s "
            "more) and was stopped; its log: %s"
            % (
                window.transport,
                limit_s,
                CLIENT_ALLOWANCE_S,
                os.path.join("floor", os.path.basename(folder), "client.log"),
            )
        )
    if status != 0:
        raise FloorError(
            "the %s client failed (exit status %d): %s (%s)"
            % (
                window.transport,
                status,
                why_failed(os.path.join(folder, "client.log")),
                os.path.join("floor", os.path.basename(folder), "client.log"),
            )
        )
    if len(marks) != 2:
        raise FloorError("the %s client did not mark its measured window" % window.transport)
    try:
        run = json.loads("".join(output))
    except ValueError:
        raise FloorError(
            "the %s client printed no JSON object: %r" % (window.transport, "".join(output)[:200])
        ) from None
    (opened, load, machine_before), (closed, _, machine_after) = marks["floor: measuring"], marks["floor: measured"]
    run["server_cpu_seconds"] = round((closed - opened) / cpu.CLOCK_TICKS, 3)
    run["load_average_1m"] = load
    run["machine_cpu"] = machine_cpu(
        machine_before, machine_after, run.get("client_cpu_seconds"), run["server_cpu_seconds"]
    )
    return run


def machine_cpu(before: cpu.Sample, after: cpu.Sample, client_s: Optional[float], server_s: float) -> Dict:
    """The machine over the floor's measured window, in % of one core: all of it busy, steal (another guest's), and
    everything else besides the floor's client and server."""
    usage = cpu.cpu_between(before, after, generator="floor client")
    other = usage["machine"]["seconds"] - usage["steal"]["seconds"] - (client_s or 0) - server_s
    wall = after.wall_s - before.wall_s
    return {
        "machine_percent": usage["machine"]["percent"],
        "steal_percent": usage["steal"]["percent"],
        "other_percent": round(max(0.0, other) / wall * 100, 1) if wall > 0 else None,
    }


# The figures whose spread a floor run records, read from one repeat's summary.
SPREAD_OF = {
    "calls_per_second": lambda repeat: repeat.get("calls_per_second"),
    "p50": lambda repeat: (repeat.get("latency_us") or {}).get("p50"),
    "p99": lambda repeat: (repeat.get("latency_us") or {}).get("p99"),
    "cpu_us_per_call": lambda repeat: repeat.get("cpu_us_per_call"),
}


def measure(
    results_dir: str,
    data: Dict,
    jvm: Jvm,
    warmup_s: float,
    duration_s: float,
    processes: Processes,
    repeats: int = 1,
    log: Callable[[str], None] = print,
    on_window: Callable[[int, int], None] = lambda index, repeat: None,
    encryption: Encryption = PLAINTEXT_ONLY,
) -> List[Dict]:
    """Runs the floor for every distinct window of the measured paths (a TLS mode's over TLS, with encryption),
    REPEATS times interleaved as the paths are; each window's record is the median of its repeats (lab.repeats).
    on_window(index, repeat) is told as each starts."""
    windows, _ = plan(data["settings"])

    def measure_window(repeat: int, index: int, window: Window, _earlier: List[Dict]) -> Dict:
        slug = "%s-%d" % (window.slug(), repeat)
        on_window(index, repeat)
        log(
            "[lab] floor round %d/%d, %d/%d: %s, %s (logs: floor/%s/)"
            % (repeat, repeats, index, len(windows), window.transport, window.describe(), slug)
        )
        log("  measuring: %gs after %gs of warm-up (repeat %d)" % (duration_s, warmup_s, repeat))
        return run_window(
            window, os.path.join(results_dir, "floor", slug), jvm, warmup_s, duration_s, processes, encryption
        )

    def told(window: Window, record: Dict) -> None:
        if "error" in record:
            log("  ERROR: " + record["error"])
            return
        log(
            "  %.0f calls/s, p50 %.0f µs; CPU client %.2f s, server %.2f s; load average %s"
            % (
                record["calls_per_second"],
                (record.get("latency_us") or {}).get("p50") or 0,
                record.get("client_cpu_seconds") or 0,
                record.get("server_cpu_seconds") or 0,
                record.get("load_average_1m"),
            )
        )

    measured = repeats_of.interleaved(windows, repeats, measure_window, after=told)
    return [repeats_of.combine(records, repeat_summary, SPREAD_OF) for records in measured.values()]


def repeat_summary(record: Dict) -> Dict:
    """What results.json keeps of one floor repeat beside the window's medians."""
    summary = {
        key: record.get(key) for key in ("calls_per_second", "latency_us", "load_average_1m", "machine_cpu", "folder")
    }
    summary["cpu_us_per_call"] = cpu_us_per_call(record)
    if "error" in record:
        summary["error"] = record["error"]
    return summary


def cpu_us_per_call(floor_run: Dict) -> Optional[float]:
    """The floor's client and server CPU per call, in µs, over its measured window."""
    client, server, calls = (floor_run.get(key) for key in ("client_cpu_seconds", "server_cpu_seconds", "calls"))
    if client is None or server is None or not calls:
        return None
    return round((client + server) * 1e6 / calls, 2)


def path_floor(run: Dict, window: Window, floor_run: Optional[Dict]) -> Dict:
    """A measured path run's floor object: its downstream calls per second against its transport's floor."""
    record = {"transport": window.transport, "window": window.as_dict(), "goal": GOAL}
    if floor_run is None or "error" in floor_run:
        record.update(error="no floor: %s" % (floor_run or {}).get("error", "the floor did not run"), met=None)
        return record
    floor_cps = floor_run["calls_per_second"]
    path_cps = round(run["rps"] * run["n"], 2)
    fraction = round(path_cps / floor_cps, 4)
    read_us = [(run.get("cpu", {}).get(name) or {}).get("us_per_call") for name in run.get("services", [])]
    services_us = [us for us in read_us if us is not None] if None not in read_us else []
    record.update(
        {
            "floor_calls_per_second": floor_cps,
            "path_calls_per_second": path_cps,
            "fraction": fraction,
            "met": fraction >= GOAL,
            "path_cpu_us_per_call": round(sum(services_us), 2) if services_us else None,
            "floor_cpu_us_per_call": cpu_us_per_call(floor_run),
            "floor_load_average_1m": floor_run.get("load_average_1m"),
        }
    )
    return record


def attach(data: Dict, floor_runs: List[Dict], extra: Optional[Dict] = None) -> None:
    """Puts the floor section into results and a floor object into every measured run that has a window: a TLS
    stack's run gets its mode's."""
    _, by_combination = plan(data["settings"])
    by_window = {Window.from_record(r["transport"], r["window"]): r for r in floor_runs}
    data["floor"] = dict(extra or {}, goal=GOAL, aggregator=data["settings"]["aggregator"], runs=floor_runs)
    for run in data["runs"]:
        window = by_combination.get(combination(run, data["settings"]))
        if window is None or "error" in run or not compared_with_floor(run):
            continue
        run["floor"] = path_floor(run, window, by_window.get(window))


def compared_with_floor(run: Dict) -> bool:
    """Whether a run is one the floor is for: the small payload on loopback (as every run before PAYLOAD and
    NETWORK was)."""
    return (run.get("payload") or catalogue.SMALL) == catalogue.SMALL and (
        run.get("network") or catalogue.LOOPBACK
    ) == catalogue.LOOPBACK


def why_failed(log_path: str) -> str:
    """The gist of a failed floor client's output: its FAILED verdict, else the first error or exception named."""
    try:
        with open(log_path, errors="replace") as handle:
            lines = [line.strip() for line in handle if line.strip()]
    except OSError as error:
        return "(cannot read its output: %s)" % error
    for marker in ("FAILED", "Error", "Exception"):
        found = next((line for line in lines if marker in line), None)
        if found:
            return found
    return tail(log_path, 3)


def tail(path: str, lines: int) -> str:
    """A log's last lines on one line, for an error message."""
    return "; ".join(line.strip() for line in log_tail(path, lines))


def _pipe(stream: Optional[IO[str]]) -> IO[str]:
    """A child's output pipe, which processes.start made (stdout or stderr=subprocess.PIPE)."""
    if stream is None:
        raise FloorError("a floor process was started without the pipe the lab reads")
    return stream
