"""Runs ApacheBench and reads what it prints.

ab is the article's tool, so the lab keeps its behaviour: HTTP/1.0 and a new TCP connection per request
(no -k). Two of its outputs are read: the report on stdout (counts, requests per second, mean time per
request, the percentile table rounded to whole milliseconds) and the -e CSV (the full 0..100 % latency
curve with microsecond resolution).
"""

import re
import subprocess
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence

from ..core.errors import AbOutputError, LabError

# The percentiles of ab's printed table, in order: ab prints exactly these.
TABLE_PERCENTILES = (50, 66, 75, 80, 90, 95, 98, 99, 100)


@dataclass
class AbReport:
    """The figures of one ab run, as ab printed them."""

    concurrency: int
    completed: int
    failed: int
    # Why requests failed: ab's "(Connect: .., Receive: .., Length: .., Exceptions: ..)"; all 0 when none did.
    failed_breakdown: Dict[str, int]
    non2xx: int
    time_taken_s: float
    rps: float
    # ab's first "Time per request": the mean latency one client sees.
    mean_ms: float
    # ab's second "Time per request": wall time divided by requests, across all clients.
    mean_across_ms: float
    document_length: int
    # ab's percentile table in whole ms, keyed by percentile; empty when ab printed none (under 2 requests).
    percentile_table_ms: Dict[int, int] = field(default_factory=dict)


def ab_command(
    url: str, requests: int, concurrency: int, timeout_s: int, csv_path: Optional[str], seconds: Optional[float] = None
) -> List[str]:
    """The ab command line of one run: `requests` requests, or with `seconds` as many as that time allows.

    -q leaves out the progress lines; -r counts a socket error as a failed request instead of aborting
    the whole run, so that a service falling over shows up as failures in the report.
    """
    command = ["ab"] + (["-t", "%g" % seconds] if seconds else [])
    command += ["-n", str(requests), "-c", str(concurrency), "-s", str(timeout_s), "-q", "-r"]
    if csv_path:
        command += ["-e", csv_path]
    return command + [url]


def run(url: str, requests: int, concurrency: int, timeout_s: int, seconds: Optional[float] = None) -> str:
    """ab's report of one run without a CSV; LabError with ab's own message when ab fails."""
    command = ab_command(url, requests, concurrency, timeout_s, None, seconds)
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise LabError("%s failed: %s" % (" ".join(command), (done.stderr or done.stdout).strip()[-300:]))
    return done.stdout


def parse_report(text: str) -> AbReport:
    """Reads ab's stdout report."""
    failed = _int_field(text, "Failed requests")
    return AbReport(
        concurrency=_int_field(text, "Concurrency Level"),
        completed=_int_field(text, "Complete requests"),
        failed=failed,
        failed_breakdown=_failed_breakdown(text, failed),
        # ab prints this line only when some response was not 2xx.
        non2xx=_int_field(text, "Non-2xx responses", default=0),
        time_taken_s=_float_field(text, "Time taken for tests"),
        rps=_float_field(text, "Requests per second"),
        mean_ms=_time_per_request(text, across=False),
        mean_across_ms=_time_per_request(text, across=True),
        document_length=_int_field(text, "Document Length"),
        percentile_table_ms=_percentile_table(text),
    )


def parse_percentile_csv(text: str, completed: int) -> List[float]:
    """Reads the -e CSV: 101 latencies in ms, for 0 % (fastest) .. 100 % (slowest) of the requests.

    ab 2.3 writes row i (1..99) from its sorted list at index int(0.5 + completed * i / 100), which runs
    past the end of the list when completed * (100 - i) <= 50: with 50 requests row 99 reads memory after
    the last one, with 1 request rows 50..99 do. Such rows hold garbage; the index ab meant there is the
    last one, the slowest request, which row 100 holds. They are read as that.
    """
    lines = [line.strip() for line in text.strip().splitlines()]
    if not lines or lines[0] != "Percentage served,Time in ms":
        raise AbOutputError("not an ab -e CSV: the first line is %r" % (lines[0] if lines else ""))
    curve = []
    for expected, line in enumerate(lines[1:]):
        percent, _, millis = line.partition(",")
        if int(percent) != expected:
            raise AbOutputError("ab CSV line %r is not percentile %d" % (line, expected))
        curve.append(float(millis))
    if len(curve) != 101:
        raise AbOutputError("ab CSV has %d percentiles, expected 0..100" % len(curve))
    if completed < 1:
        raise AbOutputError("ab CSV of a run with no completed request")
    return [
        curve[100] if 0 < i < 100 and int(0.5 + completed * i / 100) >= completed else millis
        for i, millis in enumerate(curve)
    ]


def _field(text: str, name: str) -> Optional[str]:
    match = re.search(r"^%s:\s+(\S+)" % re.escape(name), text, re.MULTILINE)
    return match.group(1) if match else None


def _int_field(text: str, name: str, default: Optional[int] = None) -> int:
    value = _field(text, name)
    if value is None:
        if default is None:
            raise AbOutputError("ab output has no %r line" % name)
        return default
    return int(value)


def _float_field(text: str, name: str) -> float:
    value = _field(text, name)
    if value is None:
        raise AbOutputError("ab output has no %r line" % name)
    return float(value)


def _time_per_request(text: str, across: bool) -> float:
    # ab prints two lines of this name; the one "across all concurrent requests" is wall time / requests.
    for match in re.finditer(r"^Time per request:\s+(\S+) \[ms\] \(mean(.*)\)$", text, re.MULTILINE):
        if bool(match.group(2)) == across:
            return float(match.group(1))
    raise AbOutputError("ab output has no 'Time per request' line%s" % (" across requests" if across else ""))


def _failed_breakdown(text: str, failed: int) -> Dict[str, int]:
    match = re.search(r"\(Connect: (\d+), Receive: (\d+), Length: (\d+), Exceptions: (\d+)\)", text)
    if not match:
        if failed:
            raise AbOutputError("ab reports %d failed requests but no breakdown" % failed)
        return {"connect": 0, "receive": 0, "length": 0, "exceptions": 0}
    connect, receive, length, exceptions = (int(g) for g in match.groups())
    return {"connect": connect, "receive": receive, "length": length, "exceptions": exceptions}


def _percentile_table(text: str) -> Dict[int, int]:
    start = text.find("Percentage of the requests served within a certain time (ms)")
    if start < 0:
        return {}
    rows = re.findall(r"^\s+(\d+)%\s+(\d+)", text[start:], re.MULTILINE)
    table = {int(percent): int(millis) for percent, millis in rows}
    if tuple(table) != TABLE_PERCENTILES:
        raise AbOutputError("ab's percentile table has rows %s, expected %s" % (list(table), TABLE_PERCENTILES))
    return table


def merge(reports: Sequence[AbReport], curve: Optional[List[float]]) -> AbReport:
    """Several ab runs one after another at one concurrency, as one report: counts and times add up, and the
    percentile table is read off their merged curve (merge_curves) when there is one."""
    if len(reports) == 1:
        return reports[0]
    completed = sum(r.completed for r in reports)
    seconds = sum(r.time_taken_s for r in reports)
    concurrency = reports[0].concurrency
    failed = sum(r.failed for r in reports)
    breakdown = {key: sum(r.failed_breakdown[key] for r in reports) for key in reports[0].failed_breakdown}
    table = {p: int(round(curve[p])) for p in TABLE_PERCENTILES} if curve else {}
    # ab's own arithmetic: requests a second over the wall time, and the two "Time per request" means.
    return AbReport(
        concurrency=concurrency,
        completed=completed,
        failed=failed,
        failed_breakdown=breakdown,
        non2xx=sum(r.non2xx for r in reports),
        time_taken_s=round(seconds, 3),
        rps=round(completed / seconds, 2) if seconds else 0.0,
        mean_ms=round(concurrency * seconds * 1e3 / completed, 3) if completed else 0.0,
        mean_across_ms=round(seconds * 1e3 / completed, 3) if completed else 0.0,
        document_length=reports[0].document_length,
        percentile_table_ms=table,
    )


def merge_curves(curves: Sequence[List[float]], counts: Sequence[int]) -> List[float]:
    """The 0..100 % latency curve of several runs together, each run's curve weighted by its requests: the latency
    below which that share of all their requests fell, reading each curve as linear between its percentiles."""
    if len(curves) == 1:
        return list(curves[0])
    total = sum(counts)

    def share_below(millis: float) -> float:
        return sum(count * _fraction_below(curve, millis) for curve, count in zip(curves, counts)) / total

    merged = []
    for percent in range(101):
        low, high = min(c[0] for c in curves), max(c[100] for c in curves)
        for _ in range(60):
            middle = (low + high) / 2
            if share_below(middle) < percent / 100:
                low = middle
            else:
                high = middle
        merged.append(round(high, 3))
    merged[0], merged[100] = min(c[0] for c in curves), max(c[100] for c in curves)
    return merged


def _fraction_below(curve: List[float], millis: float) -> float:
    """The share of one run's requests at most millis long, from its 101-point curve."""
    if millis < curve[0]:
        return 0.0
    if millis >= curve[100]:
        return 1.0
    for percent in range(100):
        low, high = curve[percent], curve[percent + 1]
        if low <= millis < high:
            return (percent + (millis - low) / (high - low)) / 100
    return 1.0


def write_percentile_csv(curve: List[float]) -> str:
    """A curve in ab's -e format, so that a merged run's CSV reads like one ab run's."""
    return "Percentage served,Time in ms\n" + "".join("%d,%.3f\n" % (p, m) for p, m in enumerate(curve))


def answered_2xx(report: AbReport) -> int:
    """The requests answered 2xx: ab counts a body of another length than the first as failed too, which a 2xx
    answer of a system whose bodies vary is not."""
    broken = sum(count for kind, count in report.failed_breakdown.items() if kind != "length")
    return max(0, report.completed - report.non2xx - broken)
