"""LOAD=knee: the highest rate a path holds within an SLO. The open loop drives the path at rising rates, doubling from
RATE until the SLO breaks, then halving the gap between the highest rate that held and the lowest that broke, until
that gap is within a tenth of the rate held, or MAX_STEPS rates were measured: a search, not a fixed list."""

import re
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional

from .errors import SettingsError

# The most rates one path is measured at: bounds the search's time at MAX_STEPS × DURATION per path.
MAX_STEPS = 10
# The search stops once the rate that broke is within this fraction above the rate that held.
PRECISION = 0.1

_SLO = re.compile(r"^(?P<figure>p50|p90|p99|max)\s*<=\s*(?P<number>\d+(?:\.\d*)?|\.\d+)\s*(?P<unit>ms|s)$")


@dataclass(frozen=True)
class Slo:
    """A latency a path must keep within, e.g. p99 <= 1000 ms, as SLO gives it."""

    figure: str
    limit_ms: float
    text: str

    def held(self, record: Dict) -> bool:
        """Whether an open-loop run kept it: every request sent answered right (no shed, no error), and the latency
        figure, from each request's intended send time, within the limit."""
        latency = (record.get("latency_ms") or {}).get(self.figure)
        return (
            not record.get("error")
            and record.get("ok") == record.get("sent")
            and bool(record.get("sent"))
            and latency is not None
            and latency <= self.limit_ms
        )


def parse_slo(value: str, name: str = "SLO") -> Slo:
    found = _SLO.match(value.strip().replace(" ", ""))
    if not found:
        raise SettingsError(
            "%s=%r: write a latency figure, <= and a time, e.g. p99<=1s or p90<=250ms (figures: p50 p90 p99 max)"
            % (name, value)
        )
    limit = float(found["number"]) * (1000.0 if found["unit"] == "s" else 1.0)
    if limit <= 0:
        raise SettingsError("%s=%r: the limit must be above 0" % (name, value))
    return Slo(found["figure"], limit, "%s <= %s" % (found["figure"], _time(limit)))


def _time(ms: float) -> str:
    return "%g s" % (ms / 1000) if ms >= 1000 else "%g ms" % ms


@dataclass
class Search:
    """One path's search: each rate measured with the record it gave and whether it held, and where it ended."""

    steps: List[Dict]
    held: Optional[int]
    broke: Optional[int]
    why: str


def search(measure: Callable[[int, int], Dict], start: int, slo: Slo, max_steps: int = MAX_STEPS) -> Search:
    """Measures rates from start (measure(rate, step) -> an open-loop record): doubling while the SLO holds, halving
    while it breaks with nothing held yet, then bisecting between the highest that held and the lowest above it that
    broke. A rate that broke before a lower one held (a colder JVM, a busier minute) is measured again before the
    search ends on it."""
    steps: List[Dict] = []
    rate = start
    while True:
        record = measure(rate, len(steps) + 1)
        steps.append({"rate": rate, "held": slo.held(record), "record": record})
        held, broke = bracket(steps)
        next_rate = _next(held, broke, rate)
        if next_rate is None and broke is not None and _stale(steps, broke):
            next_rate = broke
        if next_rate is None:
            why = _why(held, broke)
            break
        if len(steps) >= max_steps:
            why = "stopped after %d rates, the most a path is measured at" % max_steps
            break
        rate = next_rate
    return Search(steps, held, broke, why)


def bracket(steps: List[Dict]):
    """The highest rate that held when last measured, and the lowest above it that broke when last measured."""
    last = {step["rate"]: step["held"] for step in steps}
    held = max((rate for rate, kept in last.items() if kept), default=None)
    broke = min((rate for rate, kept in last.items() if not kept and (held is None or rate > held)), default=None)
    return held, broke


def _stale(steps: List[Dict], broke: int) -> bool:
    """Whether the rate that broke was last measured before the rate that held was (and only once)."""
    times = [index for index, step in enumerate(steps) if step["rate"] == broke]
    held_at = max(index for index, step in enumerate(steps) if step["held"]) if any(s["held"] for s in steps) else -1
    return len(times) == 1 and times[0] < held_at


def _next(held: Optional[int], broke: Optional[int], rate: int) -> Optional[int]:
    """The next rate to measure, or None when the search is done."""
    if broke is None:
        return rate * 2
    if held is None:
        return rate // 2 if rate > 1 else None
    if broke - held <= max(1, PRECISION * held):
        return None
    return (held + broke) // 2


def _why(held: Optional[int], broke: Optional[int]) -> str:
    if held is None:
        return "not even 1 request a second held"
    return "the rate that broke is within %d %% of the rate that held" % round(PRECISION * 100)
