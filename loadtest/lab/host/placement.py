"""Where the lab's processes run (CPUS): on every CPU the lab may use (shared), or the load generator on CPUs of its
own and the services on the rest (split), so that neither steals the other's cycles."""

import os
from dataclasses import dataclass
from typing import Callable, Dict, FrozenSet, List, Optional

from ..core.errors import SettingsError

# Below this many CPUs a split leaves the services too few to be worth measuring: one for the generator, 3 for them.
MIN_SPLIT_CPUS = 4


@dataclass(frozen=True)
class Placement:
    """The CPUs of each side; both are every CPU the lab may use when they are shared."""

    mode: str
    load_generator: FrozenSet[int]
    services: FrozenSet[int]

    def record(self) -> Dict:
        """What results.json records: the mode and each side's CPUs as taskset lists them (0-1,3)."""
        return {
            "mode": self.mode,
            "load_generator": cpu_list(self.load_generator),
            "services": cpu_list(self.services),
        }


def plan(mode: str, available: Optional[FrozenSet[int]] = None) -> Placement:
    """The placement for CPUS=mode on the CPUs this process may use. A split gives the load generator a quarter of
    them (at least one: ab uses one core at most) and the services the rest."""
    cpus = frozenset(available if available is not None else os.sched_getaffinity(0))
    if mode == "shared":
        return Placement(mode, cpus, cpus)
    if len(cpus) < MIN_SPLIT_CPUS:
        raise SettingsError(
            "CPUS=split needs at least %d CPUs (one for the load generator, the rest for the services); this "
            "lab may use %d (%s): use CPUS=shared" % (MIN_SPLIT_CPUS, len(cpus), cpu_list(cpus))
        )
    ordered = sorted(cpus)
    generator = frozenset(ordered[: max(1, len(ordered) // 4)])
    return Placement(mode, generator, cpus - generator)


_current = Placement("shared", frozenset(), frozenset())


def use(placement: Placement) -> None:
    """Makes placement the one every process the lab starts from now on follows."""
    global _current
    _current = placement


def current() -> Placement:
    return _current


def pin(side: str) -> Optional[Callable[[], None]]:
    """A preexec_fn that keeps a child (and every thread it starts) on its side's CPUs: "load_generator" or
    "services"; None when the CPUs are shared, so that a child runs exactly as without the lab."""
    if _current.mode == "shared":
        return None
    cpus = _current.load_generator if side == "load_generator" else _current.services
    return lambda: os.sched_setaffinity(0, cpus)


def cpu_list(cpus: FrozenSet[int]) -> str:
    """CPUs as taskset and /proc/<pid>/status list them: 0-3,6."""
    ranges: List[List[int]] = []
    ordered = sorted(cpus)
    for cpu in ordered:
        if ranges and cpu == ranges[-1][1] + 1:
            ranges[-1][1] = cpu
        else:
            ranges.append([cpu, cpu])
    return ",".join("%d" % a if a == b else "%d-%d" % (a, b) for a, b in ranges)
