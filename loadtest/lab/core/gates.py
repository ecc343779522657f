"""EXPECT: the gates a run must meet, read before anything starts. One gate compares a figure of a path with a number
or with a figure of another path, for example `grpc/unary.rps >= 2 * rest/unary.rps`, `grpc/stream.p99 <= 500ms` or
`*.failed == 0`; lab.results.gates judges them against results.json at the end of the run."""

import re
from dataclasses import dataclass
from typing import Dict, List, Optional

from . import catalogue
from .errors import SettingsError

# A run that measured everything but missed a gate exits with this status: distinct from 1 (the lab could not measure
# as asked, or its check failed), and the status k6 gives a run whose thresholds failed.
GATES_FAILED = 99


@dataclass(frozen=True)
class Figure:
    """A figure a gate can name: what it is, its unit, and the units a number compared with it may carry (each with
    its factor to the figure's unit)."""

    meaning: str
    unit: str
    units: Dict[str, float]


_LATENCY_UNITS = {"ms": 1.0, "s": 1000.0}
FIGURES = {
    "rps": Figure("requests a second", "req/s", {}),
    "p50": Figure("median latency", "ms", _LATENCY_UNITS),
    "p90": Figure("90th percentile latency", "ms", _LATENCY_UNITS),
    "p99": Figure("99th percentile latency", "ms", _LATENCY_UNITS),
    "max": Figure("slowest request", "ms", _LATENCY_UNITS),
    "cpu_us_per_call": Figure("CPU of the path's services per call", "µs", {"us": 1.0, "µs": 1.0}),
    "failed": Figure("failed requests", "requests", {}),
    "non2xx": Figure("answers not 2xx", "answers", {}),
    "rss_mb": Figure("peak RSS of the path's first service, the aggregator", "MiB", {"MiB": 1.0}),
}
OPERATORS = (">=", "<=", "==", ">", "<")
# `*` stands for every path a condition measured; on the left side only, so that each path is judged on its own.
EVERY = "*"
# On the right: the left's figure in the same condition of the BASELINE run, `grpc/unary.rps >= 0.95 * baseline`.
BASELINE = "baseline"


@dataclass(frozen=True)
class Reference:
    path: str
    figure: str

    def __str__(self) -> str:
        return "%s.%s" % (self.path, self.figure)


@dataclass(frozen=True)
class Side:
    """factor × reference, or the number factor alone (in the figure's unit) when reference is None."""

    factor: float
    reference: Optional[Reference] = None


@dataclass(frozen=True)
class Gate:
    text: str
    left: Side
    operator: str
    right: Side

    @property
    def subject(self) -> Reference:
        """The figure on the left, which every gate has (parse puts it there)."""
        assert self.left.reference is not None
        return self.left.reference

    def paths(self) -> List[str]:
        return [side.reference.path for side in (self.left, self.right) if side.reference]


_NUMBER = r"\d+(?:\.\d*)?|\.\d+"
_REFERENCE = r"(?P<path>\*|[\w/-]+)\.(?P<figure>\w+)"
_SCALED = re.compile(r"^(?:(?P<factor>%s)\s*\*\s*)?%s$" % (_NUMBER, _REFERENCE))
_CONSTANT = re.compile(r"^(?P<number>%s)\s*(?P<unit>[a-zA-Zµ]*)$" % _NUMBER)
_BASELINE = re.compile(r"^(?:(?P<factor>%s)\s*\*\s*)?%s$" % (_NUMBER, BASELINE))


def parse(value: str, name: str = "EXPECT") -> List[Gate]:
    """The gates of a knob's value, separated by semicolons; a SettingsError naming the gate and what is wrong, with
    the paths or figures it accepts, for anything it cannot read."""
    gates = [_gate(text.strip(), name) for text in value.split(";") if text.strip()]
    return gates


def _gate(text: str, name: str) -> Gate:
    operator = next((op for op in OPERATORS if op in text), None)
    if operator is None:
        raise SettingsError("%s: %r has no comparison; use one of %s" % (name, text, " ".join(OPERATORS)))
    left_text, right_text = (part.strip() for part in text.split(operator, 1))
    left, right = _side(left_text, text, name), _side(right_text, text, name)
    if left.reference is None and right.reference is None:
        raise SettingsError("%s: %r compares two numbers; name a figure, e.g. grpc/unary.rps" % (name, text))
    if right.reference is not None and right.reference.path == EVERY:
        raise SettingsError("%s: %r: `*` stands on the left side only, e.g. *.failed == 0" % (name, text))
    if left.reference is None or left.reference.path == BASELINE:
        raise SettingsError("%s: %r: put the figure on the left, e.g. grpc/unary.p99 <= 500ms" % (name, text))
    if right.reference is not None and right.reference.path == BASELINE:
        right = Side(right.factor, Reference(BASELINE, left.reference.figure))
    figures = {side.reference.figure for side in (left, right) if side.reference}
    if right.reference is None:
        right = Side(right.factor * _unit_factor(right_text, left.reference.figure, text, name))
    elif len(figures) > 1:
        raise SettingsError("%s: %r compares %s with %s; compare a figure with itself" % (name, text, *sorted(figures)))
    return Gate(text, left, operator, right)


def _side(text: str, gate: str, name: str) -> Side:
    constant = _CONSTANT.match(text)
    if constant:
        return Side(float(constant["number"]))
    baseline = _BASELINE.match(text)
    if baseline:
        # Its figure is the left side's, filled in by _gate.
        return Side(float(baseline["factor"] or 1), Reference(BASELINE, ""))
    scaled = _SCALED.match(text)
    if scaled:
        path, figure = scaled["path"], scaled["figure"]
        if path != EVERY and path not in catalogue.ALL:
            raise SettingsError(
                "%s: %r names %s, which is not a path; paths: %s" % (name, gate, path, " ".join(catalogue.ALL))
            )
        if figure not in FIGURES:
            raise SettingsError("%s: %r names the figure %s; figures: %s" % (name, gate, figure, " ".join(FIGURES)))
        return Side(float(scaled["factor"] or 1), Reference(path, figure))
    raise SettingsError(
        "%s: %r: cannot read %r; write a figure (path.figure, e.g. rest/unary.p99), a number times one "
        "(2 * rest/unary.rps), a number with its unit (500ms) or the baseline's (0.95 * baseline)" % (name, gate, text)
    )


def _unit_factor(text: str, figure: str, gate: str, name: str) -> float:
    constant = _CONSTANT.match(text)
    unit = constant["unit"] if constant else ""
    if not unit:
        return 1.0
    known = FIGURES[figure].units
    if unit not in known:
        raise SettingsError(
            "%s: %r: %s is in %s; a number compared with it takes %s"
            % (name, gate, figure, FIGURES[figure].unit, " or ".join(known) or "no unit")
        )
    return known[unit]


def check_measured(gates: List[Gate], paths: List[str], baseline: bool, name: str = "EXPECT") -> None:
    """A SettingsError for a gate that names a path the run will not measure (PATHS), or the baseline without one."""
    for gate in gates:
        if BASELINE in gate.paths() and not baseline:
            raise SettingsError("%s: %r names the baseline: set BASELINE to a results folder" % (name, gate.text))
        missing = [path for path in gate.paths() if path not in (EVERY, BASELINE) and path not in paths]
        if missing:
            raise SettingsError(
                "%s: %r names %s, which PATHS does not measure (PATHS: %s)"
                % (name, gate.text, " ".join(missing), " ".join(paths))
            )


def holds(left: float, operator: str, right: float) -> bool:
    return {
        ">=": left >= right,
        "<=": left <= right,
        "==": left == right,
        ">": left > right,
        "<": left < right,
    }[operator]


def usage() -> str:
    """The figures a gate may name, for the README's knob table."""
    return ", ".join("`%s` (%s, %s)" % (name, figure.meaning, figure.unit) for name, figure in FIGURES.items())
