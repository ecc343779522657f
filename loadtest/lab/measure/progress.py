"""How far a lab run is and how long it has left: the run's steps are planned up front with a time each is expected to
take, and while a step lasts, a line every PERIOD_S says what it is doing, how much of the run is done and about how
long is left. A step whose time is not known in advance (ab's fixed count of requests) is expected to take what
the same step took in the round before, else what measured steps took on average so far."""

import threading
import time
from dataclasses import dataclass
from typing import Callable, List, Optional

from ..core import knee, repeats

# Seconds between two progress lines during a long step.
PERIOD_S = 10.0
# What a step of unknown length is expected to take before anything has been measured.
UNKNOWN_STEP_S = 15.0


@dataclass
class Step:
    """One planned step: its key (its kind first, e.g. ("measure", stack, network, path, shape, n, point, repeat,
    part)), what a progress line calls it, its combination (a step of the same kind and combination in a later round is
    expected to take what this one took), and the seconds it is expected to take (None: unknown until a step like it
    has run)."""

    key: tuple
    label: str
    combination: tuple = ()
    expected_s: Optional[float] = None
    took_s: Optional[float] = None

    @property
    def kind(self) -> str:
        return self.key[0]


class Progress:
    """The run's steps in order; begin(key) starts the step with that key, finish() ends it."""

    def __init__(
        self, steps: List[Step], log: Callable[[str], None] = print, clock=time.monotonic, period_s: float = PERIOD_S
    ) -> None:
        self.steps = steps
        self.log = log
        self.clock = clock
        self.period_s = period_s
        self.started = clock()
        self.current: Optional[int] = None
        self.step_started = self.started
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread: Optional[threading.Thread] = None

    def begin(self, key: tuple, label: str = "") -> None:
        """Starts the planned step with this key (one not in the plan is added where the run is, called label)."""
        with self._lock:
            self._finish_current()
            start = 0 if self.current is None else self.current + 1
            found = next((i for i in range(start, len(self.steps)) if self.steps[i].key == key), None)
            if found is None:
                self.steps.insert(start, Step(key, label or " ".join(map(str, key))))
                found = start
            self.current, self.step_started = found, self.clock()

    def expect(self, key: tuple, seconds: float) -> None:
        """What a planned step not run yet is now expected to take, from what the run has seen (a path's rounds)."""
        with self._lock:
            for step in self.steps:
                if step.key == key and step.took_s is None:
                    step.expected_s = seconds

    def skip(self, key: tuple) -> None:
        """A planned step the run found it need not take (a part its repeat's earlier parts already filled)."""
        self.expect(key, 0.0)

    def finish(self) -> None:
        with self._lock:
            self._finish_current()

    def _finish_current(self) -> None:
        if self.current is not None and self.steps[self.current].took_s is None:
            self.steps[self.current].took_s = self.clock() - self.step_started

    def where(self) -> str:
        """Where the run is, for a message about its stopping: "during <step>, after 6 min 12 s"."""
        with self._lock:
            elapsed = _clock_text(self.clock() - self.started)
            if self.current is None:
                return "after %s" % elapsed
            return "during %s, after %s" % (self.steps[self.current].label, elapsed)

    def expected(self, index: int) -> float:
        """What step index is expected to take: its own estimate, or what the same kind and combination took
        last, or the average of the steps of its kind that have run, or UNKNOWN_STEP_S."""
        step = self.steps[index]
        if step.expected_s is not None:
            return step.expected_s
        alike = [s.took_s for s in self.steps[:index] if s.took_s is not None and s.kind == step.kind]
        same = [
            s.took_s
            for s in self.steps[:index]
            if s.took_s is not None and s.kind == step.kind and s.combination == step.combination
        ]
        if same:
            return same[-1]
        return sum(alike) / len(alike) if alike else UNKNOWN_STEP_S

    def line(self) -> str:
        """What the run is doing, how much is done and about how long is left."""
        with self._lock:
            now = self.clock()
            elapsed = now - self.started
            if self.current is None:
                return "[lab] %s elapsed" % _clock_text(elapsed)
            in_step = now - self.step_started
            step_left = max(0.0, self.expected(self.current) - in_step)
            after = sum(self.expected(i) for i in range(self.current + 1, len(self.steps)))
            left = step_left + after
            share = elapsed / (elapsed + left) if elapsed + left > 0 else 1.0
            step = self.steps[self.current]
            return "[lab] %d %% done, about %s left (%s elapsed): %s, %ds of about %ds" % (
                round(share * 100),
                _clock_text(left),
                _clock_text(elapsed),
                step.label,
                in_step,
                round(self.expected(self.current)),
            )

    def __enter__(self) -> "Progress":
        self._thread = threading.Thread(target=self._report, name="lab-progress", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *_) -> None:
        self.finish()
        self._stop.set()
        if self._thread:
            self._thread.join()

    def _report(self) -> None:
        while not self._stop.wait(self.period_s):
            self.log(self.line())


def _clock_text(seconds: float) -> str:
    """12 s, 3 min 05 s, 1 h 02 min."""
    seconds = max(0, int(round(seconds)))
    if seconds < 60:
        return "%d s" % seconds
    if seconds < 3600:
        return "%d min %02d s" % divmod(seconds, 60)
    return "%d h %02d min" % (seconds // 3600, seconds % 3600 // 60)


def plan(settings, stacks: List[str], floor_windows: List[str]) -> List[Step]:
    """The steps of a lab run with these settings, stacks (their labels) and floor windows (their descriptions), in
    the order lab.experiments.run takes them, each with the seconds it is expected to take; a measured run with ab's
    fixed count
    of requests is unknown until one has run."""
    by_time = settings.open_loop or not settings.requests
    measure_s = settings.duration_s + 2.0 if by_time else None
    combos = settings.combinations()
    steps = []
    for stack in stacks:
        steps.append(Step(("start-squares", stack), "starting the square services", expected_s=20.0))
        for net in settings.network:
            steps.append(
                Step(
                    ("start-aggregator", stack, net), "starting the aggregator and checking every path", expected_s=15.0
                )
            )
            text = {
                combo: "%s n=%d %s=%d" % (combo[0], combo[2], "rate" if settings.open_loop else "c", combo[3])
                for combo in combos
            }
            if settings.warmup_s:
                steps += [
                    Step(
                        ("warm-up", stack, net) + combo,
                        "warming up " + text[combo],
                        (stack, net) + combo,
                        # A closed loop's goes on while the JIT compiles (lab.core.warmup.JIT_WAIT).
                        settings.warmup_s * (1.0 if settings.open_loop else 1.5) + 2.0,
                    )
                    for combo in combos
                ]
            if settings.knee:
                # At most MAX_STEPS rates per path; the steps a search does not need are skipped as it ends.
                steps += [
                    Step(
                        ("knee", stack, net) + combo + (step,),
                        "searching %s's highest rate within %s, rate %d of at most %d"
                        % (combo[0], settings.slo, step, knee.MAX_STEPS),
                        (stack, net) + combo,
                        settings.duration_s + 2.0,
                    )
                    for combo in combos
                    for step in range(1, knee.MAX_STEPS + 1)
                ]
                continue
            parts = settings.parts
            for part, repeat in repeats.turns(settings.repeats, parts):
                steps += [
                    Step(
                        ("measure", stack, net) + combo + (repeat, part),
                        "measuring %s, round %d of %d%s"
                        % (
                            text[combo],
                            repeat,
                            settings.repeats,
                            ", part %d of %d" % (part, parts) if parts > 1 else "",
                        ),
                        (stack, net) + combo,
                        measure_s and settings.duration_s / parts + 2.0,
                    )
                    for combo in combos
                ]
            if settings.mix and stack == stacks[0] and net == settings.network[0]:
                # Each mixed path runs as long as the slowest took alone, for every n: about a measured run each.
                steps.append(Step(("mix",), "mixed traffic", expected_s=len(settings.n) * (measure_s or 30.0)))
    # The floor (lab.measure.floor.measure): each window warmed up first, then the parts of every repeat taking turns.
    for index, window in enumerate(floor_windows, 1):
        steps.append(
            Step(
                ("floor-warm-up", index),
                "the floor: warming up %s" % window,
                ("floor", index),
                settings.floor_warmup_s * 1.5 + 3.0,
            )
        )
    floor_parts = settings.floor_parts
    for part, repeat in repeats.turns(settings.repeats, floor_parts):
        for index, window in enumerate(floor_windows, 1):
            steps.append(
                Step(
                    ("floor", index, repeat, part),
                    "the floor: %s, round %d of %d%s"
                    % (
                        window,
                        repeat,
                        settings.repeats,
                        ", part %d of %d" % (part, floor_parts) if floor_parts > 1 else "",
                    ),
                    ("floor", index),
                    settings.floor_duration_s / floor_parts + 1.0,
                )
            )
    return steps
