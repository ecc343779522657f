"""Every process the lab starts (the services, Prometheus, the floor's JVMs), the one Java command line of them all,
the one way it waits for one to be ready, and their stopping.

Each child runs in a session of its own, so that stopping it reaches whatever it started too (the floor's
JVMs, Prometheus under its script): TERM to the group, then KILL to what is left after a grace period. The
lab stops every child it started on its way out, whether it finished, failed, was interrupted (Ctrl-C) or
was told to stop (TERM).
"""

import collections
import os
import signal
import subprocess
import threading
import time
from dataclasses import dataclass
from typing import IO, Callable, Iterable, List, Mapping, Optional, Sequence, Union

from ..core.errors import ServiceExited
from . import placement

# Spring's graceful shutdown lets requests under way finish: the services get this long after a TERM.
STOP_GRACE_S = 20.0
_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

Output = Union[int, IO, None]
# How much of a dead service's log its error shows.
LOG_LINES_SHOWN = 10


@dataclass(frozen=True)
class Watched:
    """A service process the lab started and measures through: its name (a replica's with its number), the child,
    and the log its output goes to."""

    name: str
    child: subprocess.Popen
    log_path: str


def check_alive(watched: Iterable[Watched], during: str) -> None:
    """Raises ServiceExited naming the first watched process that has exited, what it was doing (during), its exit
    (code, or the signal that killed it) and its log's last lines; returns when all of them still run."""
    for process in watched:
        code = process.child.poll()
        if code is None:
            continue
        raise ServiceExited(
            "%s exited (%s) during %s, so the lab stops here: what it measured so far is kept.\n"
            "[lab] its log: %s\n[lab] the log's last lines:\n%s"
            % (
                process.name,
                exit_text(code),
                during,
                process.log_path,
                "\n".join("  " + line for line in log_tail(process.log_path, LOG_LINES_SHOWN)),
            )
        )


def java_command(java: str, java_opts: str, jar: str, arguments: Sequence[str] = ()) -> List[str]:
    """`java <JAVA_OPTS> -jar <jar> <arguments>`: how the lab starts every JVM, the services' and the floor's."""
    return [java] + java_opts.split() + ["-jar", jar] + list(arguments)


def wait_until(ready: Callable[[], bool], timeout_s: float, interval_s: float, sleep=time.sleep) -> bool:
    """Asks ready() every interval_s until it says so (True) or timeout_s has passed (False); ready() raises to end
    the wait at once, e.g. when the process it waits for has exited."""
    deadline = time.monotonic() + timeout_s
    while not ready():
        if time.monotonic() > deadline:
            return False
        sleep(interval_s)
    return True


def exit_text(code: int) -> str:
    """A child's exit as Popen reports it, in words: a negative code is the signal that killed it."""
    if code >= 0:
        return "exit code %d" % code
    try:
        name = signal.Signals(-code).name
    except ValueError:
        name = "signal %d" % -code
    return "killed by %s" % name


def log_tail(path: str, count: int) -> List[str]:
    """The last count non-blank lines of a log, or why there are none: ["(empty)"], ["(cannot read it: ...)"]."""
    try:
        with open(path, errors="replace") as handle:
            kept = collections.deque((line.rstrip() for line in handle if line.strip()), maxlen=count)
    except OSError as error:
        return ["(cannot read it: %s)" % error]
    return list(kept) or ["(empty)"]


class Processes:
    """The children the lab started, to be stopped together (a context manager: they are, on exit)."""

    def __init__(self) -> None:
        self._children: List[subprocess.Popen] = []

    def start(
        self,
        command: Sequence[str],
        log_path: Optional[str] = None,
        stdout: Output = None,
        stderr: Output = None,
        env: Optional[Mapping[str, str]] = None,
        side: Optional[str] = None,
        stdin: Output = subprocess.DEVNULL,
    ) -> subprocess.Popen:
        """Starts a child with no input (unless stdin says otherwise: subprocess.PIPE, to hand it work), its output
        into log_path (both streams) unless stdout/stderr say otherwise (e.g. subprocess.PIPE, to read what it
        prints); on its side's CPUs (lab.placement) if it has one."""
        log = open(log_path, "w") if log_path else None
        try:
            child = subprocess.Popen(
                list(command),
                stdin=stdin,
                stdout=stdout if stdout is not None else log,
                stderr=stderr if stderr is not None else (log or None),
                env=dict(env) if env is not None else None,
                text=True,
                start_new_session=True,
                preexec_fn=placement.pin(side) if side else None,
            )
        finally:
            if log:
                log.close()
        self._children.append(child)
        return child

    def stop(self, children: Sequence[subprocess.Popen], grace_s: float = STOP_GRACE_S) -> None:
        """TERM to each child's group, then KILL to the groups whose leader is still there after grace_s; waits
        for them. A second Ctrl-C or TERM while it stops them does not cut it short."""
        previous = {
            signum: signal.signal(signum, signal.SIG_IGN)
            for signum in _STOP_SIGNALS
            if threading.current_thread() is threading.main_thread()
        }
        try:
            running = [child for child in children if child.poll() is None]
            for child in running:
                _signal_group(child.pid, signal.SIGTERM)
            for child in running:
                try:
                    child.wait(timeout=grace_s)
                except subprocess.TimeoutExpired:
                    # Killed before it is reaped, so that its pid, the group's id, cannot have been reused.
                    _signal_group(child.pid, signal.SIGKILL)
                    child.wait()
            for child in children:
                if child in self._children:
                    self._children.remove(child)
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)

    def stop_all(self) -> None:
        self.stop(list(reversed(self._children)))

    def __enter__(self) -> "Processes":
        return self

    def __exit__(self, *exc) -> None:
        self.stop_all()


def _signal_group(group: int, signum: int) -> None:
    try:
        os.killpg(group, signum)
    except (ProcessLookupError, PermissionError):
        pass


def raise_on_term() -> None:
    """Makes a TERM, or the terminal going away (HUP), end the lab as Ctrl-C does, as an exception, so that every
    child, each in a session of its own that neither signal reaches, is stopped on the way out."""
    signal.signal(signal.SIGTERM, _raise_exit)
    signal.signal(signal.SIGHUP, _raise_exit)


def _raise_exit(signum, _frame):
    raise SystemExit(128 + signum)
