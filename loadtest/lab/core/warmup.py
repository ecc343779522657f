"""The lab's one warm-up rule, for a path's closed loop, a many-clients path and a floor window alike: WARMUP seconds of
the load, discarded, going on in stretches of a quarter of it while a JVM of the path spends more than JIT_BUSY of the
last stretch compiling, up to a cap (JIT_WAIT times WARMUP): code still being compiled at round 1 made the REST paths
faster at round 3 than at round 1, and a fresh JVM per floor repeat moved the floor by up to 37 %."""

import time
from dataclasses import dataclass
from typing import Callable, Dict, Optional

# The largest share of a stretch a JVM's JIT may spend compiling once warm: the services never stop compiling
# altogether (a few hundred ms in every 20 s repeat), and what is left falls on every part alike.
JIT_BUSY = 0.05
# The warm-up goes on at most this many times WARMUP while the JIT compiles.
JIT_WAIT = 2


@dataclass(frozen=True)
class WarmUp:
    """A warm-up's outcome: the closed loop's pace at its end (None: unknown), its seconds, and whether every JVM's
    JIT had settled (None: not watched)."""

    pace: Optional[float]
    seconds: float
    jit_settled: Optional[bool] = None

    def record(self) -> Dict:
        return {"seconds": round(self.seconds, 1), "jit_settled": self.jit_settled}


class Rule:
    """One warm-up's clock: next_stretch(busy) after each stretch gives the seconds of the next, or None once warm."""

    def __init__(self, warmup_s: float, cap: float = JIT_WAIT, clock: Callable[[], float] = time.monotonic) -> None:
        self.warmup_s = warmup_s
        self.cap = cap
        self.clock = clock
        self.started = clock()
        self.settled: Optional[bool] = None

    def next_stretch(self, busy: Optional[float]) -> Optional[float]:
        """busy: the largest share of the last stretch a JVM compiled (None: not known)."""
        self.settled = None if busy is None else busy <= JIT_BUSY
        elapsed = self.elapsed()
        if (elapsed >= self.warmup_s and self.settled is not False) or elapsed >= self.warmup_s * self.cap:
            return None
        return min(self.warmup_s - elapsed, self.warmup_s / 4) if elapsed < self.warmup_s else self.warmup_s / 4

    def elapsed(self) -> float:
        return self.clock() - self.started

    def outcome(self, pace: Optional[float] = None) -> WarmUp:
        return WarmUp(pace, self.elapsed(), self.settled)

    def said(self) -> str:
        """How the warm-up ended, as the lab says it: "warm after 12s", with the JIT's state when not settled."""
        return "warm after %.0fs%s" % (
            self.elapsed(),
            {True: "", False: ", the JIT still compiling", None: ", the JIT not watched"}[self.settled],
        )


def warm(stretch: Callable[[float], object], busy: Callable[[], Optional[float]], rule: Rule, first_s: float) -> WarmUp:
    """Runs stretch(seconds) from first_s on until the rule says warm; busy() gives the JIT's share of each stretch."""
    seconds: Optional[float] = first_s
    while seconds is not None:
        stretch(seconds)
        seconds = rule.next_stretch(busy())
    return rule.outcome()
