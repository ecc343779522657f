"""The soak: an open-loop run of DURATION >= SOAK_MIN_S seconds also reports, per whole minute, each service's RSS,
its heap after a full collection and the path's p99, and whether each series stayed flat.

Each minute mark the lab reads every service's RSS (VmRSS), then has it run a full collection (`jcmd <pid> GC.run`;
with the serial collector a stop-the-world mark-compact of the whole heap) and reads Micrometer's
jvm_gc_live_data_size_bytes, the old generation after that collection: the heap the service keeps alive. A leak
grows it minute after minute whatever the collector's rhythm, which a passive reading after the collector's own
occasional full collections would sample too rarely to see. The minute's p99 is Vegeta's, of the ok answers due in it.

Flat: the median of the last third of the minutes (at least one) is within FLAT_LIMIT of the median of the first
third. The warm-up (WARMUP_SECONDS) ran before the first minute.
"""

import threading
import time
from typing import Callable, Dict, List, Optional

from ..core.errors import LabError, MetricsError
from ..core.settings import Settings, soak_wanted
from ..host import cpu, jvm

MINUTE_S = 60.0
# A run that ends this long before its last minute mark ended early: no minute is waited for.
FINISH_SLACK_S = 5.0


def wanted(settings: Settings) -> bool:
    """Whether each measured run is a soak: an open loop of at least two whole minutes."""
    return soak_wanted(settings)


class MinuteSampler:
    """Reads the services' RSS and heap after a full collection at each whole minute of a run, in a thread of its own,
    from start() until the minutes are done (finish() waits for them) or stop() is called."""

    def __init__(
        self,
        services: Dict[str, Dict],
        duration_s: float,
        minute_s: float = MINUTE_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        # services: by name, {"pids": [...], "metrics_urls": [...]}.
        self.services = services
        self.minutes = int(duration_s // minute_s)
        self.minute_s = minute_s
        self.clock = clock
        self.rss_mib: Dict[str, List[Optional[float]]] = {name: [] for name in services}
        self.heap_after_gc_mib: Dict[str, List[Optional[float]]] = {name: [] for name in services}
        self.errors: List[str] = []
        # jcmd's CPU: a child of the lab, so the load generator's CPU (RUSAGE_CHILDREN) would count it otherwise.
        self.jcmd_cpu_s = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="soak-sampler", daemon=True)

    def start(self) -> None:
        self._started = self.clock()
        self._thread.start()

    def finish(self) -> None:
        """Waits for the last minute's reading when the run lasted until its mark; stops the sampler when the run
        ended well before it (the load generator failed)."""
        if self.clock() < self._started + self.minutes * self.minute_s - FINISH_SLACK_S:
            self._stop.set()
        self._thread.join()

    def stop(self) -> None:
        """Ends the sampling now, whatever minutes are left (the run ended early)."""
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        for minute in range(1, self.minutes + 1):
            if self._stop.wait(max(0.0, self._started + minute * self.minute_s - self.clock())):
                return
            for name, service in self.services.items():
                self.rss_mib[name].append(self._rss(name, service["pids"]))
                self.heap_after_gc_mib[name].append(self._heap_after_gc(name, service))

    def _rss(self, name: str, pids: List[int]) -> Optional[float]:
        try:
            return cpu.rss_mib(pids)
        except (OSError, ValueError) as error:
            self.errors.append("%s: no RSS: %s" % (name, error))
            return None

    def _heap_after_gc(self, name: str, service: Dict) -> Optional[float]:
        """The largest replica's old generation after a full collection the lab asked for (lab.host.jvm), in MiB."""
        sizes = []
        for pid, url in zip(service["pids"], service["metrics_urls"]):
            cpu_before = cpu.children_cpu_seconds()
            try:
                sizes.append(jvm.heap_after_gc(pid, url))
            except (LabError, MetricsError) as error:
                self.errors.append("%s: no heap after GC: %s" % (name, error))
                return None
            finally:
                self.jcmd_cpu_s += cpu.children_cpu_seconds() - cpu_before
        return round(max(sizes) / 2**20, 1) if sizes else None

    def series(self, per_minute: Dict) -> Dict:
        """Vegeta's per-minute figures (open_loop.Minutes) with the services' RSS and heap after GC beside them."""
        found = dict(
            per_minute,
            rss_mib=self.rss_mib,
            heap_after_gc_mib=self.heap_after_gc_mib,
            jcmd_cpu_s=round(self.jcmd_cpu_s, 3),
        )
        if self.errors:
            found["errors"] = self.errors[:10]
        return found
