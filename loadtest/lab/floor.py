"""The transport floor beside the paths: the bare transports of transport-floor/ (no Spring on the path), run
by the lab after the paths, with the services stopped, on the same machine and with the window the aggregator
had in each measured combination; and each path's fraction of its floor.

The window of a combination (path, n, concurrency) follows from the aggregator's settings, `aggregator.in-flight`
(default 8) and `aggregator.rest.max-connections` (default 64), which AGGREGATOR_ARGS may override:

- grpc/unary -> grpc-unary: concurrency x min(n, in-flight) calls in flight on one channel. Each request keeps
  at most in-flight of its n calls in flight, and ab keeps `concurrency` requests at the aggregator.
- rest/unary -> http: as many keep-alive connections as there can be calls, up to the pool's max-connections:
  min(max-connections, concurrency x min(n, in-flight)); one call on each.
- grpc/stream -> grpc-stream: concurrency streams (one per request), n messages on each.

n = 0 costs no downstream call, and the rest/square baseline has no aggregator: neither has a floor.
"""

import json
import os
import re
import signal
import subprocess
import time
from dataclasses import dataclass, asdict
from typing import Callable, Dict, List, Mapping, Optional, Tuple

from . import paths

GOAL = 0.6
DEFAULT_IN_FLIGHT = 8
DEFAULT_MAX_CONNECTIONS = 64

# The floor script's knobs that the lab sets for each run; any value of them in the lab's own environment is
# not passed on, so that a run has exactly the window the lab chose.
WINDOW_KNOBS = ("FLOOR_TRANSPORTS", "FLOOR_IN_FLIGHT", "FLOOR_CONNECTIONS", "FLOOR_STREAMS", "FLOOR_MESSAGES",
                "FLOOR_JAR", "JAVA_OPTS", "JAVA")

# What run-floor.sh takes at most, besides FLOOR_WARMUP and FLOOR_DURATION, when nothing hangs: each server's
# start (FLOOR_START_TIMEOUT, 60 s), the client's wait for its first answer (30 s), its end of run (10 s to
# answer what is in flight, 10 s more to give up) and the stopping of two processes (5 s each).
FIXED_ALLOWANCE_S = 30 + 10 + 10 + 5 + 5
# Slack for the JVMs' start and a busy machine, on top.
SLACK_S = 60
# When the lab does not set them, the floor's defaults: 10 s of warm-up, then 10 s measured.
ASSUMED_DEFAULT_S = {"FLOOR_DURATION": 10.0, "FLOOR_WARMUP": 10.0}
# How long the floor script gets to stop what it started after a TERM (its trap stops two JVMs, 5 s each).
STOP_GRACE_S = 15

_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m)?")
_UNIT_S = {"ms": 1e-3, "s": 1.0, None: 1.0, "m": 60.0}


class FloorError(Exception):
    """The floor cannot be planned or read; the message says why."""


def parse_duration(text: str, name: str) -> float:
    """Seconds of a floor duration, written as transport-floor takes it: 500ms, 3s, 1.5s, 1m (bare: seconds)."""
    match = _DURATION.fullmatch(text.strip())
    if not match:
        raise ValueError("%s must be a duration such as 500ms, 3s or 1m, got %r" % (name, text))
    return float(match.group(1)) * _UNIT_S[match.group(2)]


def aggregator_options(aggregator_args: str) -> Dict[str, int]:
    """The aggregator's in-flight and REST pool size, after the Spring arguments the lab gives it.

    Spring binds `--aggregator.in-flight=64`, `--aggregator.inFlight=64` and `--aggregator.in_flight=64` alike
    (relaxed binding), and the last of repeated arguments is the one seen here. Only arguments count: the lab
    sets the aggregator's options through AGGREGATOR_ARGS (`lab floor` compares in-flight with the aggregator's
    own start-up line).
    """
    options = {"in_flight": DEFAULT_IN_FLIGHT, "rest_max_connections": DEFAULT_MAX_CONNECTIONS}
    names = {"aggregator.inflight": "in_flight", "aggregator.rest.maxconnections": "rest_max_connections"}
    for argument in aggregator_args.split():
        if not argument.startswith("--") or "=" not in argument:
            continue
        key, value = argument[2:].split("=", 1)
        option = names.get(key.lower().replace("-", "").replace("_", ""))
        if option is None:
            continue
        try:
            options[option] = int(value)
        except ValueError:
            raise FloorError("%s in AGGREGATOR_ARGS is not a whole number" % argument) from None
        if options[option] < 1:
            raise FloorError("%s in AGGREGATOR_ARGS must be at least 1" % argument)
    return options


def logged_in_flight(log_text: str) -> Optional[int]:
    """The calls in flight per request the aggregator says it uses, in its start-up line, if it is there."""
    found = re.findall(r"; (\d+) calls in flight per request", log_text)
    return int(found[-1]) if found else None


@dataclass(frozen=True)
class Window:
    """What the floor keeps in flight for one transport: the aggregator's window in one combination."""

    transport: str
    in_flight: Optional[int] = None            # grpc-unary: calls in flight on the one channel
    connections: Optional[int] = None          # http: keep-alive connections, one call on each
    streams: Optional[int] = None              # grpc-stream: concurrent bidi streams
    messages_per_stream: Optional[int] = None  # grpc-stream: messages on each stream before a new one opens

    def as_dict(self) -> Dict:
        return {key: value for key, value in asdict(self).items() if value is not None and key != "transport"}

    @classmethod
    def from_record(cls, transport: str, window: Dict) -> "Window":
        return cls(transport, **window)

    def slug(self) -> str:
        """The name of the run's folder under floor/, e.g. grpc-stream_s100_m1000."""
        letters = {"in_flight": "i", "connections": "c", "streams": "s", "messages_per_stream": "m"}
        return "_".join([self.transport] + ["%s%d" % (letters[key], value) for key, value in self.as_dict().items()])

    def describe(self) -> str:
        if self.transport == "grpc-unary":
            return "%d calls in flight" % self.in_flight
        if self.transport == "http":
            return "%d connections" % self.connections
        return "%d streams × %d messages" % (self.streams, self.messages_per_stream)

    def env(self) -> Dict[str, str]:
        """The floor script's knobs for this window alone."""
        knobs = {"FLOOR_TRANSPORTS": self.transport}
        if self.transport == "grpc-unary":
            knobs["FLOOR_IN_FLIGHT"] = str(self.in_flight)
        elif self.transport == "http":
            # The http client opens min(in-flight, connections) connections.
            knobs["FLOOR_IN_FLIGHT"] = knobs["FLOOR_CONNECTIONS"] = str(self.connections)
        else:
            knobs["FLOOR_STREAMS"] = str(self.streams)
            knobs["FLOOR_MESSAGES"] = str(self.messages_per_stream)
        return knobs

    def check(self, run_settings: Dict) -> Tuple[List[str], List[str]]:
        """(mismatches, notes) between this window and the settings a floor run says it used."""
        problems, notes = [], []
        reported = {"grpc-unary": ("in_flight",), "http": ("connections",),
                    "grpc-stream": ("streams", "messages_per_stream")}[self.transport]
        for key in reported:
            wanted, used = getattr(self, key), run_settings.get(key)
            if key == "messages_per_stream" and used is None:
                notes.append("the floor's streams carried no set number of messages (a floor from before "
                             "FLOOR_MESSAGES): messages per stream not compared")
            elif used != wanted:
                problems.append("the floor ran with %s=%s, the aggregator's window is %s" % (key, used, wanted))
        return problems, notes


def window_for(path_name: str, n: int, concurrency: int, options: Dict[str, int]) -> Optional[Window]:
    """The floor window of one measured combination, or None when the path has no floor."""
    transport = paths.ALL[path_name].floor_transport
    if transport is None or n < 1:
        return None
    calls = concurrency * min(n, options["in_flight"])
    if transport == "grpc-unary":
        return Window(transport, in_flight=calls)
    if transport == "http":
        return Window(transport, connections=min(options["rest_max_connections"], calls))
    return Window(transport, streams=concurrency, messages_per_stream=n)


def plan(settings: Dict) -> Tuple[List[Window], Dict[Tuple[str, int, int], Window]]:
    """(each distinct window once, in the order the paths ran; the window of every combination that has one)."""
    options = aggregator_options(settings.get("aggregator_args") or "")
    windows, by_combination = [], {}
    for path_name in settings["paths"]:
        for n in settings["n"]:
            for concurrency in settings["concurrency"]:
                window = window_for(path_name, n, concurrency, options)
                if window is None:
                    continue
                by_combination[(path_name, n, concurrency)] = window
                if window not in windows:
                    windows.append(window)
    return windows, by_combination


def time_limit_s(env: Mapping[str, str]) -> float:
    """How long one floor run (one transport) may take before the lab stops it as hung."""
    total = FIXED_ALLOWANCE_S + SLACK_S
    total += float(env.get("FLOOR_START_TIMEOUT") or 60)
    for name, assumed in ASSUMED_DEFAULT_S.items():
        total += parse_duration(env[name], name) if env.get(name, "").strip() else assumed
    return total


def script_env(window: Window, base: Mapping[str, str], jar: str, java: str, java_opts: str) -> Dict[str, str]:
    env = {key: value for key, value in base.items() if key not in WINDOW_KNOBS}
    env.update(window.env(), FLOOR_JAR=jar, JAVA=java, JAVA_OPTS=java_opts)
    return env


def run_script(command: List[str], env: Mapping[str, str], log_path: str, limit_s: float) -> Optional[int]:
    """Runs the floor script, its output into log_path; its exit status, or None when it ran past limit_s.

    It runs in a process group of its own, so that stopping it (past the limit, or when the lab is stopped)
    reaches its JVMs too: TERM to the group, which the script's trap answers by stopping them, then KILL to
    whatever is left after STOP_GRACE_S.
    """
    with open(log_path, "w") as log:
        process = subprocess.Popen(command, env=dict(env), stdin=subprocess.DEVNULL, stdout=log,
                                   stderr=subprocess.STDOUT, start_new_session=True)
        try:
            return process.wait(timeout=limit_s)
        except subprocess.TimeoutExpired:
            _stop_group(process)
            return None
        except BaseException:
            _stop_group(process)
            raise


def _stop_group(process: subprocess.Popen) -> None:
    _signal_group(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=STOP_GRACE_S)
    except subprocess.TimeoutExpired:
        pass
    _signal_group(process.pid, signal.SIGKILL)
    process.wait()


def _signal_group(group: int, signum: int) -> None:
    try:
        os.killpg(group, signum)
    except ProcessLookupError:
        pass


def run_window(window: Window, folder: str, command: List[str], env: Mapping[str, str], limit_s: float) -> Dict:
    """Runs the floor for one window into folder (its floor.json and run-floor.log); the run's record."""
    os.makedirs(folder, exist_ok=True)
    log_path = os.path.join(folder, "run-floor.log")
    record = {"transport": window.transport, "window": window.as_dict(),
              "folder": os.path.join("floor", os.path.basename(folder))}
    started = time.monotonic()
    status = run_script(command + [folder], env, log_path, limit_s)
    record["wall_seconds"] = round(time.monotonic() - started, 1)
    if status is None:
        record["error"] = ("run-floor.sh did not finish within %.0f s and was stopped; the end of %s/run-floor.log: %s"
                           % (limit_s, record["folder"], tail(log_path, 3)))
        return record
    if status != 0:
        record["error"] = ("run-floor.sh failed (exit status %d)%s: %s (%s/run-floor.log)"
                           % (status, _out_of_memory(log_path, env.get("JAVA_OPTS", "")), why_failed(log_path),
                              record["folder"]))
        return record
    try:
        record.update(read_run(os.path.join(folder, "floor.json"), window))
    except FloorError as error:
        record["error"] = str(error)
    return record


def read_run(floor_json: str, window: Window) -> Dict:
    """The run of window's transport in a floor.json, with the file's settings as floor_settings."""
    try:
        with open(floor_json) as handle:
            data = json.load(handle)
    except (OSError, ValueError) as error:
        raise FloorError("cannot read %s: %s" % (floor_json, error)) from None
    found = [run for run in data.get("runs", []) if run.get("transport") == window.transport]
    if len(found) != 1:
        raise FloorError("%s has %d %s runs, expected one" % (floor_json, len(found), window.transport))
    run = dict(found[0])
    problems, _ = window.check(run.get("settings") or {})
    if problems:
        raise FloorError("%s: %s" % (floor_json, "; ".join(problems)))
    if not run.get("calls_per_second"):
        raise FloorError("%s: the %s floor made no calls (calls_per_second %s)"
                         % (floor_json, window.transport, run.get("calls_per_second")))
    run["floor_settings"] = data.get("settings", {})
    return run


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
    services_us = [(run.get("cpu", {}).get(name) or {}).get("us_per_call") for name in run.get("services", [])]
    record.update({
        "floor_calls_per_second": floor_cps,
        "path_calls_per_second": path_cps,
        "fraction": fraction,
        "met": fraction >= GOAL,
        "path_cpu_us_per_call": round(sum(services_us), 2) if services_us and None not in services_us else None,
        "floor_cpu_us_per_call": cpu_us_per_call(floor_run),
        "floor_load_average_1m": floor_run.get("load_average_1m"),
    })
    return record


def attach(data: Dict, floor_runs: List[Dict], options: Dict[str, int], extra: Optional[Dict] = None) -> None:
    """Puts the floor section into results and a floor object into every measured run that has a window."""
    _, by_combination = plan(data["settings"])
    by_window = {Window.from_record(r["transport"], r["window"]): r for r in floor_runs}
    data["floor"] = dict(extra or {}, goal=GOAL, aggregator=options, runs=floor_runs)
    for run in data["runs"]:
        window = by_combination.get((run["path"], run["n"], run["concurrency"]))
        if window is None or "error" in run:
            continue
        run["floor"] = path_floor(run, window, by_window.get(window))


def measure(results_dir: str, data: Dict, script: str, jar: str, java: str, java_opts: str,
            env: Mapping[str, str], log: Callable[[str], None] = print) -> List[Dict]:
    """Runs the floor for every distinct window of the measured paths, one transport per run-floor.sh run."""
    windows, _ = plan(data["settings"])
    limit = time_limit_s(env)
    records = []
    for index, window in enumerate(windows, 1):
        folder = os.path.join(results_dir, "floor", window.slug())
        log("[lab] floor %d/%d: %s, %s (log: floor/%s/run-floor.log)"
            % (index, len(windows), window.transport, window.describe(), window.slug()))
        record = run_window(window, folder, ["bash", script], script_env(window, env, jar, java, java_opts), limit)
        records.append(record)
        if "error" in record:
            log("  ERROR: " + record["error"])
        else:
            log("  %.0f calls/s, p50 %.0f µs; CPU client %.2f s, server %.2f s; load average %s"
                % (record["calls_per_second"], (record.get("latency_us") or {}).get("p50") or 0,
                   record.get("client_cpu_seconds") or 0, record.get("server_cpu_seconds") or 0,
                   record.get("load_average_1m")))
    return records


def why_failed(log_path: str) -> str:
    """The gist of a failed floor run's output: the first line that says what went wrong (a FAILED verdict of the
    client, else the first error or exception named), then the script's own last word."""
    try:
        with open(log_path, errors="replace") as handle:
            lines = [line.strip() for line in handle if line.strip()]
    except OSError as error:
        return "(cannot read its output: %s)" % error
    cause = None
    for pattern in (r".*\bFAILED\b.*", r"[\w.$]+Error\b.*", r"[\w.$]+Exception\b(?! in thread).*"):
        cause = next((re.search(pattern, line).group(0) for line in lines if re.search(pattern, line)), None)
        if cause:
            break
    verdict = next((line for line in reversed(lines) if line.startswith("run-floor:")), None)
    found = [part for part in (cause, verdict) if part]
    if not found:
        return tail(log_path, 3)
    return "; ".join(found[:1] + [part for part in found[1:] if part != found[0]])


def _out_of_memory(log_path: str, java_opts: str) -> str:
    try:
        with open(log_path, errors="replace") as handle:
            if "OutOfMemoryError" not in handle.read():
                return ""
    except OSError:
        return ""
    return ", a floor JVM ran out of memory with JAVA_OPTS=%s" % (java_opts or "(none)")


def tail(path: str, lines: int) -> str:
    try:
        with open(path, errors="replace") as handle:
            kept = [line.strip() for line in handle.readlines() if line.strip()][-lines:]
    except OSError as error:
        return "(cannot read it: %s)" % error
    return "; ".join(kept) if kept else "(empty)"
