"""The one wait until the aggregator is idle: its admission and in-flight gauges (lab.core.metrics.WORK_GAUGES) all at
0, and, where a caller asks, its own counts steady too; so that a warm-up's requests do not run on into a measured
run, and a run's leftovers are not counted as a leak."""

import time
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional

from ..core import metrics
from ..core.errors import LabError, MetricsError
from ..host.processes import wait_until


@dataclass
class Idle:
    """What the wait found: the last page read, its work gauges, whether they all reached 0, and how long it took."""

    samples: List[metrics.Sample]
    gauges: Dict[str, float]
    zero: bool
    waited_s: float

    def record(self) -> Dict:
        return {"values": self.gauges, "zero": self.zero, "waited_s": self.waited_s}


def wait_idle(
    metrics_url: str,
    wait_s: float,
    interval_s: float = 0.5,
    steady: Optional[Callable[[List[metrics.Sample]], object]] = None,
    on_error: Callable[[MetricsError], None] = lambda error: None,
) -> Idle:
    """Reads the aggregator's page until every work gauge is 0 (and steady(samples) gave the same twice in a row, when
    given) or wait_s has passed. A page that cannot be read calls on_error (which may raise), else a LabError."""
    began = time.monotonic()
    pages: List[List[metrics.Sample]] = []

    def idle() -> bool:
        try:
            pages.append(metrics.scrape(metrics_url))
        except MetricsError as error:
            on_error(error)
            raise LabError("the aggregator's metrics: %s" % error) from None
        if any(metrics.work_gauges(pages[-1]).values()):
            return False
        return steady is None or (len(pages) > 1 and steady(pages[-1]) == steady(pages[-2]))

    zero = wait_until(idle, wait_s, interval_s)
    return Idle(pages[-1], metrics.work_gauges(pages[-1]), zero, round(time.monotonic() - began, 1))
