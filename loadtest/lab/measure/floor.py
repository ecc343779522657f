"""The transport floor, measured as the paths are: the bare transports of transport-floor/ (no Spring on the path),
run by the lab after the paths, with the services stopped, on the same machine and with the window the aggregator had
in each measured combination (lab.core.windows). One client JVM and one bare server per kind and TLS mode for the whole
floor; each window warmed up by the paths' rule, then every repeat in parts that take turns with the other windows'.
Under TLS each mode's windows run over TLS with the run's certificates and the TLS_PROVIDER the services had.

Each part sends the client one line of arguments, reads its result, and reads the server's CPU time from /proc the
moment the client says the part's measured window opens and closes.
"""

import json
import os
import queue
import subprocess
import threading
import time
from dataclasses import dataclass
from typing import IO, Any, Callable, Dict, List, Optional, Tuple

from ..core import catalogue, warmup
from ..core import repeats as repeats_of
from ..core.errors import FloorError
from ..core.windows import SERVER_KIND, Window, cpu_us_per_call, plan
from ..host import cpu, jit
from ..host.processes import Processes, exit_text, java_command, log_tail, wait_until
from ..stage import tls

# A bare server prints its port within this long, or the run fails.
SERVER_START_S = 60.0
# Besides its warm-up and measured window, a client may take this long: its JVM's start, its wait for a first
# answer and its end of run (the client's own FIRST_ANSWER_TIMEOUT and DRAIN_TIMEOUT, 30 s and 10 s), with room.
CLIENT_ALLOWANCE_S = 90.0
# The floor's servers answer no request after the client is done: a short grace is enough to stop them.
SERVER_STOP_GRACE_S = 5.0


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
        grpc-netty-shaded copy, as lab.stage.tls gives the services."""
        if self.provider != "jdk":
            return jvm
        switches = " ".join(sorted(set(tls.NO_OPENSSL.values())))
        return Jvm(jvm.jar, jvm.java, (jvm.java_opts + " " + switches).strip())

    def _found(self, mode: str) -> tls.Certificates:
        if self.certificates is None:
            raise FloorError("a floor window over %s without the run's certificates" % catalogue.TLS_NAMES[mode])
        return self.certificates


PLAINTEXT_ONLY = Encryption(None)


# Each part first runs this long, discarded: its calls start from none, as a path's ab run starts its clients.
PART_RAMP_S = 0.5


@dataclass
class _Server:
    """A bare server of the session: its process, its port, and what it said before it listened (its TLS line)."""

    child: subprocess.Popen
    port: int
    said: List[str]


class Session:
    """The floor's JVMs, kept across the parts that take turns, as the services are across the paths' (a fresh JVM
    for each run moved a transport's figure by up to 37 % between its repeats): a bare server of each kind a window
    needs, per TLS mode, started on first use, and one client JVM (transport-floor's `session`) that runs every
    window's warm-up and parts, one line of arguments at a time. Their logs go into floor/."""

    def __init__(
        self,
        folder: str,
        jvm: Jvm,
        processes: Processes,
        encryption: Encryption = PLAINTEXT_ONLY,
    ) -> None:
        self.folder = folder
        self.jvm = jvm
        self.processes = processes
        self.encryption = encryption
        self.servers: Dict[Tuple[str, Optional[str]], _Server] = {}
        self.client: Optional[subprocess.Popen] = None
        self.answers: "queue.Queue[Optional[str]]" = queue.Queue()
        # The run under way: its server's pid, and the moments its client marked, with what was read then.
        self.server_pid = 0
        self.marks: Dict[str, Tuple[int, Optional[float], cpu.Sample]] = {}
        os.makedirs(folder, exist_ok=True)

    def server(self, window: Window) -> _Server:
        """The window's server, started (and waited for) on first use; FloorError when it does not listen."""
        key = (SERVER_KIND[window.transport], window.tls)
        if key not in self.servers:
            self.servers[key] = self._start_server(*key)
        return self.servers[key]

    def _start_server(self, kind: str, mode: Optional[str]) -> _Server:
        log_path = os.path.join(self.folder, "server-%s%s.log" % (kind, "-" + mode if mode else ""))
        child = self.processes.start(
            self._jvm(mode).command(
                "server",
                kind,
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                *(self.encryption.server_arguments(mode) if mode else []),
            ),
            log_path=log_path,
            stdout=subprocess.PIPE,
            side="services",
        )
        try:
            port, said = _await_port(child, log_path)
        except FloorError:
            self.processes.stop([child], grace_s=SERVER_STOP_GRACE_S)
            raise
        return _Server(child, port, said)

    def _jvm(self, mode: Optional[str]) -> Jvm:
        return self.encryption.jvm(self.jvm) if mode else self.jvm

    def _client(self) -> subprocess.Popen:
        """The client JVM, started on first use (again after one that hung or exited)."""
        if self.client is not None and self.client.poll() is None:
            return self.client
        # Under TLS_PROVIDER=jdk its TLS windows need the JDK's SSLEngine: one switch for the whole session.
        modes = {window_mode for _, window_mode in self.servers if window_mode}
        self.client = self.processes.start(
            self._jvm(next(iter(modes), None)).command("session"),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            side="load_generator",
        )
        self.answers = queue.Queue()
        client = self.client
        threading.Thread(target=self._read_answers, args=(client, self.answers), daemon=True).start()
        threading.Thread(target=self._read_progress, args=(client,), daemon=True).start()
        return client

    def _read_answers(self, client: subprocess.Popen, answers: "queue.Queue[Optional[str]]") -> None:
        for line in _pipe(client.stdout):
            answers.put(line)
        answers.put(None)

    def _read_progress(self, client: subprocess.Popen) -> None:
        """The client's stderr into floor/client.log; the server's CPU read the moment a mark arrives."""
        with open(os.path.join(self.folder, "client.log"), "a") as log:
            for line in _pipe(client.stderr):
                log.write(line)
                log.flush()
                for mark in ("floor: measuring", "floor: measured"):
                    if line.startswith(mark) and mark not in self.marks:
                        self.marks[mark] = (
                            cpu.process_ticks(self.server_pid),
                            (cpu.load_average() or (None,))[0],
                            cpu.take_sample({}),
                        )

    def run(self, window: Window, warmup_s: float, duration_s: float) -> Dict:
        """One run of the window's load: warmup_s discarded, then duration_s measured; the client's result with the
        server's CPU over the measured window. FloorError when it cannot be run, fails or hangs."""
        server = self.server(window)
        client = self._client()
        self.server_pid, self.marks = server.child.pid, {}
        words = [window.transport, "--target", "127.0.0.1:%d" % server.port, *window.client_arguments()]
        words += ["--warmup", "%g" % warmup_s, "--duration", "%g" % duration_s]
        words += self.encryption.client_arguments(window.tls) if window.tls else []
        limit_s = warmup_s + duration_s + CLIENT_ALLOWANCE_S
        try:
            stdin = _pipe(client.stdin)
            stdin.write(json.dumps(words) + "\n")
            stdin.flush()
            line = self.answers.get(timeout=limit_s)
        except queue.Empty:
            self.processes.stop([client], grace_s=SERVER_STOP_GRACE_S)
            raise FloorError(
                "the floor's client had not finished a %s run after %.0f s (its warm-up, its measured window and "
                "%.0f s more) and was stopped; its log: floor/client.log"
                % (window.transport, limit_s, CLIENT_ALLOWANCE_S)
            ) from None
        except OSError:
            line = None
        if line is None:
            client.wait()
            raise FloorError(
                "the floor's client exited (%s): %s (floor/client.log)"
                % (exit_text(client.returncode), why_failed(os.path.join(self.folder, "client.log")))
            )
        try:
            run = json.loads(line)
        except ValueError:
            raise FloorError("the %s client printed no JSON object: %r" % (window.transport, line[:200])) from None
        if "error" in run:
            raise FloorError("the %s client failed: %s" % (window.transport, run["error"]))
        # The marks come on stderr, the result on stdout: the marks' reader may be a moment behind.
        wait_until(lambda: len(self.marks) == 2, 5.0, 0.01)
        if len(self.marks) != 2:
            raise FloorError("the %s client did not mark its measured window" % window.transport)
        (opened, load, machine_before), (closed, _, machine_after) = (
            self.marks["floor: measuring"],
            self.marks["floor: measured"],
        )
        run["server_cpu_seconds"] = round((closed - opened) / cpu.CLOCK_TICKS, 3)
        run["load_average_1m"] = load
        run["machine_cpu"] = machine_cpu(
            machine_before, machine_after, run.get("client_cpu_seconds"), run["server_cpu_seconds"]
        )
        if window.tls:
            run["tls"] = _tls_record(window, run.get("tls") or {}, server.said, self._jvm(window.tls))
        return run

    def jit_watch(self, window: Window) -> Callable[[], Optional[float]]:
        """The largest share of the time since its last look that the window's client or server JVM compiled."""
        pids = [self._client().pid, self.server(window).child.pid]
        return jit.watch(pids)

    def close(self) -> None:
        """Ends the client's input (it exits at its end) and stops every JVM of the session."""
        if self.client is not None and self.client.poll() is None:
            try:
                _pipe(self.client.stdin).close()
                self.client.wait(timeout=SERVER_STOP_GRACE_S)
            except (OSError, subprocess.TimeoutExpired):
                pass
        children = [server.child for server in self.servers.values()] + ([self.client] if self.client else [])
        self.processes.stop(children, grace_s=SERVER_STOP_GRACE_S)
        for server in self.servers.values():
            _pipe(server.child.stdout).close()


def run_part(session: Session, window: Window, duration_s: float) -> Dict:
    """One part of a window's repeat: PART_RAMP_S of its load, discarded, then duration_s measured; the part's record,
    with an error instead of its figures when it failed."""
    record: Dict[str, Any] = {"transport": window.transport, "window": window.as_dict(), "folder": "floor"}
    started = time.monotonic()
    try:
        record.update(session.run(window, PART_RAMP_S, duration_s))
    except FloorError as error:
        record["error"] = str(error)
    record["wall_seconds"] = round(time.monotonic() - started, 1)
    if "error" not in record:
        problems = window.check(record.get("settings") or {})
        if problems:
            record["error"] = "; ".join(problems)
        elif not record.get("calls_per_second"):
            record["error"] = "the %s floor made no calls" % window.transport
    return record


def warm(session: Session, window: Window, warmup_s: float, log: Callable[[str], None]) -> Dict:
    """The paths' warm-up rule (lab.core.warmup) on the window's load, its client's and server's JIT watched; its
    record ({seconds, jit_settled}), or {error} when the window cannot run."""
    if not warmup_s:
        return {"seconds": 0.0, "jit_settled": None}
    rule = warmup.Rule(warmup_s)
    try:
        warmup.warm(lambda seconds: session.run(window, 0, seconds), session.jit_watch(window), rule, warmup_s)
    except FloorError as error:
        log("  ERROR: %s" % error)
        return {"error": str(error)}
    log("  " + rule.said())
    return rule.outcome().record()


def add_up(parts: List[Dict]) -> Dict:
    """One repeat's record from its parts: calls, seconds and CPU added up, calls per second over them, each latency
    percentile weighed by the part's calls (the clients report percentiles, not their histograms), the machine's
    share weighed by each part's seconds. A part with an error makes the repeat's."""
    failed = next((part for part in parts if "error" in part), None)
    if failed:
        return failed
    whole = dict(parts[0])
    calls = [part["calls"] for part in parts]
    seconds = [part["seconds"] for part in parts]
    whole["calls"], whole["seconds"] = sum(calls), round(sum(seconds), 3)
    whole["calls_per_second"] = round(whole["calls"] / whole["seconds"], 3) if whole["seconds"] else 0
    whole["latency_us"] = {
        key: (
            max(part["latency_us"][key] for part in parts)
            if key == "max"
            else round(sum(part["latency_us"][key] * count for part, count in zip(parts, calls)) / sum(calls), 3)
            if sum(calls)
            else None
        )
        for key in parts[0]["latency_us"]
    }
    for key in ("client_cpu_seconds", "server_cpu_seconds", "answers_checked", "unanswered_at_end", "wall_seconds"):
        values = [part.get(key) for part in parts]
        whole[key] = None if None in values else round(sum(value or 0 for value in values), 3)
    whole["machine_cpu"] = {
        key: (
            None
            if any(part["machine_cpu"].get(key) is None for part in parts)
            else round(sum(part["machine_cpu"][key] * s for part, s in zip(parts, seconds)) / sum(seconds), 1)
        )
        for key in parts[0]["machine_cpu"]
    }
    whole["parts"] = len(parts)
    return whole


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
    parts: int = 1,
    log: Callable[[str], None] = print,
    on_step: Callable[[tuple, str], None] = lambda key, label: None,
    encryption: Encryption = PLAINTEXT_ONLY,
) -> List[Dict]:
    """Runs the floor for every distinct window of the measured paths (a TLS mode's over TLS, with encryption) as the
    paths are measured (lab.core.repeats.interleaved): on one session's JVMs, each window warmed up first by the paths'
    rule, then REPEATS repeats of duration_s, each in `parts` parts that take turns with the other windows' and
    repeats'; each window's record is the median of its repeats. on_step(key, label) is told as each step starts."""
    windows, _ = plan(data["settings"])
    session = Session(os.path.join(results_dir, "floor"), jvm, processes, encryption)
    warm_ups: Dict[Window, Dict] = {}
    part_s = duration_s / parts

    def warm_window(index: int, window: Window) -> None:
        on_step(("floor-warm-up", index), "the floor: warming up %s, %s" % (window.transport, window.describe()))
        log("[lab] floor warm-up %d/%d: %s, %s" % (index, len(windows), window.transport, window.describe()))
        warm_ups[window] = warm(session, window, warmup_s, log)

    def measure_part(repeat: int, index: int, window: Window, _earlier: List[Dict], part: int) -> Dict:
        on_step(
            ("floor", index, repeat, part),
            "the floor: %s, round %d of %d%s"
            % (window.transport, repeat, repeats, ", part %d of %d" % (part, parts) if parts > 1 else ""),
        )
        log(
            "[lab] floor round %d/%d, %srun %d/%d: %s, %s: %gs measured after %gs"
            % (
                repeat,
                repeats,
                "part %d/%d, " % (part, parts) if parts > 1 else "",
                index,
                len(windows),
                window.transport,
                window.describe(),
                part_s,
                PART_RAMP_S,
            )
        )
        if "error" in warm_ups.get(window, {}):
            return dict(
                transport=window.transport, window=window.as_dict(), folder="floor", error=warm_ups[window]["error"]
            )
        return run_part(session, window, part_s)

    def add_up_parts(window: Window, records: List[Dict]) -> Dict:
        whole = add_up(records)
        whole["warm_up"] = warm_ups.get(window) or {"seconds": 0.0, "jit_settled": None}
        whole["floor_settings"] = {
            "warmup_s": warmup_s,
            "duration_s": duration_s,
            "parts": parts,
            "part_ramp_s": PART_RAMP_S,
            "java_opts": jvm.java_opts,
            "processors": os.cpu_count(),
        }
        return whole

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

    try:
        measured = repeats_of.interleaved(windows, repeats, measure_part, warm_window, told, parts, add_up_parts)
    finally:
        session.close()
    return [repeats_of.combine(records, repeat_summary, SPREAD_OF) for records in measured.values()]


def repeat_summary(record: Dict) -> Dict:
    """What results.json keeps of one floor repeat beside the window's medians."""
    summary = {
        key: record.get(key) for key in ("calls_per_second", "latency_us", "load_average_1m", "machine_cpu", "folder")
    }
    summary["cpu_us_per_call"] = cpu_us_per_call(record)
    for key in ("parts", "error"):
        if key in record:
            summary[key] = record[key]
    return summary


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
