"""The services' own metrics around a measured run, read until they settle, and their JIT's share of a stretch of time
(lab.core.metrics reads and sums the pages)."""

import time
from typing import Callable, Dict, List, Mapping, Optional

from ..core.catalogue import Path
from ..core.errors import MetricsError
from ..core.metrics import COMPILE_METRIC, Sample, _calls, scrape_all, server_side, total


def settle(
    path: Path,
    before: Mapping[str, List[Sample]],
    read: Callable[[], Mapping[str, List[Sample]]],
    tries: int = 10,
    pause_s: float = 0.1,
    sleep=time.sleep,
):
    """(after, record): scrapes until two scrapes in a row give the same record of calls.

    A service records a call's metrics as the call ends, which can be a moment after its caller got the
    answer (and after ab got the last response): reading once, at once, could miss the last calls.
    """
    after = read()
    record = server_side(path, before, after)
    for _ in range(tries):
        sleep(pause_s)
        again = read()
        again_record = server_side(path, before, again)
        if _calls(again_record) == _calls(record):
            break
        after, record = again, again_record
    return after, record


class JitWatch:
    """The share of the time since its last look that each service's JIT compiled (jvm_compilation_time_ms_total,
    Micrometer's, on /actuator/prometheus)."""

    def __init__(self, urls: Dict[str, List[str]]) -> None:
        self.urls = urls
        self.last = self._read()

    def busiest_share(self) -> Optional[float]:
        """The largest service's share since the last look, or None when a page could not be read."""
        before, self.last = self.last, self._read()
        if before is None or self.last is None:
            return None
        (started, compiled_before), (ended, compiled_after) = before, self.last
        elapsed_ms = (ended - started) * 1000.0
        return max((compiled_after[name] - compiled_before[name]) / elapsed_ms for name in compiled_after)

    def _read(self):
        if not self.urls:
            return None
        try:
            pages = scrape_all(self.urls)
        except MetricsError:
            return None
        return time.monotonic(), {name: total(samples, COMPILE_METRIC) for name, samples in pages.items()}
