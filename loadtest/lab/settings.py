"""The lab's knobs: environment variables with defaults that replicate the article's `ab -n 1000 -c 100`."""

import os
from dataclasses import dataclass, asdict
from typing import Dict, List, Mapping, Optional

from . import floor, paths

DEFAULTS = {
    "REQUESTS": "1000",
    "CONCURRENCY": "100",
    "N": "1000",
    "PATHS": paths.DEFAULT,
    "WARMUP": "100",
    "AB_TIMEOUT": "120",
    "FLOOR": "1",
    "REPLICAS": "1",
}

# Replica r of a square service listens on its port + (r - 1) (REST) or + 2 (r - 1) (gRPC and its actuator).
MAX_REPLICAS = 8


class SettingsError(ValueError):
    """A knob has a value the lab cannot use; the message says which and why."""


@dataclass
class Settings:
    requests: int
    concurrency: List[int]
    n: List[int]
    paths: List[str]
    warmup: int
    ab_timeout_s: int
    # 1: after the paths, with the services stopped, run the transport floor (transport-floor/run-floor.sh).
    floor: bool = True
    # FLOOR_DURATION and FLOOR_WARMUP as given, passed to the floor; None: the floor's own defaults.
    floor_duration: Optional[str] = None
    floor_warmup: Optional[str] = None
    # How many replicas of each square service the lab starts; the aggregator spreads its calls over them all.
    replicas: int = 1

    @classmethod
    def from_env(cls, env: Mapping[str, str] = os.environ) -> "Settings":
        def knob(name: str) -> str:
            value = env.get(name, "").strip()
            return value if value else DEFAULTS[name]

        settings = cls(
            requests=_positive(knob("REQUESTS"), "REQUESTS"),
            concurrency=[_positive(v, "CONCURRENCY") for v in knob("CONCURRENCY").split()],
            n=[_non_negative(v, "N") for v in knob("N").split()],
            paths=[p.name for p in _paths(knob("PATHS"))],
            warmup=_non_negative(knob("WARMUP"), "WARMUP"),
            ab_timeout_s=_positive(knob("AB_TIMEOUT"), "AB_TIMEOUT"),
            floor=_switch(knob("FLOOR"), "FLOOR"),
            floor_duration=_duration(env, "FLOOR_DURATION", positive=True),
            floor_warmup=_duration(env, "FLOOR_WARMUP", positive=False),
            replicas=_positive(knob("REPLICAS"), "REPLICAS"),
        )
        if settings.replicas > MAX_REPLICAS:
            raise SettingsError("REPLICAS must be at most %d, got %d" % (MAX_REPLICAS, settings.replicas))
        settings._check_combinations()
        return settings

    def combinations(self):
        """(path, n, concurrency) of every run, in the order they run."""
        return [(p, n, c) for p in self.paths for n in self.n for c in self.concurrency]

    def warmup_requests(self, concurrency: int) -> int:
        # ab refuses fewer requests than clients, so a warm-up sends at least one request per client.
        return max(self.warmup, concurrency) if self.warmup else 0

    def as_dict(self) -> Dict:
        return asdict(self)

    def _check_combinations(self) -> None:
        too_many = [c for c in self.concurrency if c > self.requests]
        if too_many:
            raise SettingsError("CONCURRENCY %s is above REQUESTS=%d: ab needs at least one request per client"
                                % (" ".join(map(str, too_many)), self.requests))
        if len(set(self.concurrency)) != len(self.concurrency) or len(set(self.n)) != len(self.n):
            raise SettingsError("CONCURRENCY and N must not repeat a value")
        for name in self.paths:
            if paths.ALL[name].target != paths.AGGREGATOR:
                too_big = [n for n in self.n if n > 2 ** 31 - 1]
                if too_big:
                    raise SettingsError("N %s is not a 32-bit number for path %s" % (too_big, name))


def _number(value: str, name: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise SettingsError("%s must be a whole number (or a space-separated list for CONCURRENCY and N), "
                            "got %r" % (name, value)) from None


def _positive(value: str, name: str) -> int:
    number = _number(value, name)
    if number < 1:
        raise SettingsError("%s must be at least 1, got %d" % (name, number))
    return number


def _non_negative(value: str, name: str) -> int:
    number = _number(value, name)
    if number < 0:
        raise SettingsError("%s must not be negative, got %d" % (name, number))
    return number


def _switch(value: str, name: str) -> bool:
    if value not in ("0", "1"):
        raise SettingsError("%s must be 0 or 1, got %r" % (name, value))
    return value == "1"


def _duration(env: Mapping[str, str], name: str, positive: bool) -> Optional[str]:
    value = env.get(name, "").strip()
    if not value:
        return None
    try:
        seconds = floor.parse_duration(value, name)
    except ValueError as error:
        raise SettingsError(str(error)) from None
    if positive and seconds <= 0:
        raise SettingsError("%s must be longer than 0, got %r" % (name, value))
    return value


def _paths(value: str):
    try:
        return paths.parse(value)
    except ValueError as error:
        raise SettingsError(str(error)) from None
