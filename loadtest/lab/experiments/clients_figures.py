"""The figures of the many-clients command (lab.many_clients), from what the aggregator counted and ab printed: each
row's goodput, sheds, other statuses and ab's failures, its goodput against the best of the lower client counts, the
checks the issue asks for, and the markdown table.
"""

from dataclasses import asdict, dataclass, field
from typing import Dict, List, Optional

from ..core import metrics
from ..core.catalogue import Path
from ..load import ab_output

REQUESTS_METRIC = "http_server_requests_seconds_count"
SHED_METRIC = "aggregator_admission_shed_total"
OK, SHED = "200", "503"
# ab's failures that are not about an answer's length (which every 503 beside a first 200 is).
AB_ERRORS = ("connect", "receive", "exceptions")
SERVICE_URIS_PREFIX = "/actuator"


@dataclass
class Counts:
    """The aggregator's own counters at one moment: its answers on the path's URI by status, its answers on any other
    URI of the API (a request refused before it was matched to the path) by status, and its admission's sheds on the
    path's transport."""

    statuses: Dict[str, float] = field(default_factory=dict)
    elsewhere: Dict[str, float] = field(default_factory=dict)
    admission_shed: float = 0.0

    def minus(self, before: "Counts") -> "Counts":
        return Counts(
            _minus(self.statuses, before.statuses),
            _minus(self.elsewhere, before.elsewhere),
            self.admission_shed - before.admission_shed,
        )

    def answered(self) -> float:
        return sum(self.statuses.values()) + sum(self.elsewhere.values())


def counts(samples: List[metrics.Sample], path: Path) -> Counts:
    """What the aggregator's /actuator/prometheus says it answered on the path (its URI template, e.g. /rest/unary/{n})
    and elsewhere in its API, and shed on the path's transport."""
    found = Counts()
    for sample in samples:
        if sample.name != REQUESTS_METRIC:
            continue
        uri, status = sample.labels.get("uri", ""), sample.labels.get("status", "?")
        if uri == path.url_path:
            found.statuses[status] = found.statuses.get(status, 0.0) + sample.value
        elif not uri.startswith(SERVICE_URIS_PREFIX):
            found.elsewhere[status] = found.elsewhere.get(status, 0.0) + sample.value
    found.admission_shed = metrics.total(samples, SHED_METRIC, transport=path.transport or "")
    return found


def work_held(samples: List[metrics.Sample]) -> float:
    """The aggregator's work under way now, in squares, requests and calls together (0: idle)."""
    return sum(value for value in metrics.work_gauges(samples).values() if value > 0)


def _minus(after: Dict[str, float], before: Dict[str, float]) -> Dict[str, float]:
    return {
        key: after.get(key, 0.0) - before.get(key, 0.0)
        for key in sorted(set(after) | set(before))
        if after.get(key, 0.0) - before.get(key, 0.0)
    }


def whole(values: Dict[str, float]) -> Dict[str, int]:
    return {key: int(round(value)) for key, value in values.items()}


def ab_figures(report: Optional[ab_output.AbReport], exit_code: int, error: Optional[str], expected_bytes: int) -> Dict:
    """ab's side of a row: what it completed, its failures by kind, and its error when it did not finish a report.

    ab compares every answer's length with its first answer's. When that first one had the expected body's length,
    a length failure is either a non-2xx answer (a problem body, whose length is not the answer's) or a 200 of the
    wrong length: wrong_bodies counts those; when the first answer was a 503, it cannot be told (None)."""
    if report is None:
        return {
            "exit_code": exit_code,
            "error": error or "ab printed no report",
            "completed": None,
            "errors": {},
            "wrong_bodies": None,
        }
    failed = report.failed_breakdown
    checked = report.document_length == expected_bytes
    return {
        "exit_code": exit_code,
        "error": error,
        "completed": report.completed,
        "non2xx": report.non2xx,
        "rps": report.rps,
        "seconds": report.time_taken_s,
        "length_failures": failed["length"],
        "wrong_bodies": max(0, failed["length"] - report.non2xx) if checked else None,
        "errors": {kind: failed[kind] for kind in AB_ERRORS if failed[kind]},
    }


@dataclass(frozen=True)
class Run:
    """One measured run's raw facts, before they become a row: the counters before it, when ab exited and once the
    aggregator settled; ab's wall seconds."""

    before: Counts
    at_end: Counts
    settled: Counts
    seconds: float


def row(
    path: Path,
    n: int,
    clients: int,
    run: Run,
    ab: Dict,
    health: Dict,
    main_health: Optional[Dict],
    peak_rss_mib: Dict[str, float],
    out_of_memory: List[str],
) -> Dict:
    """A row of the table. Goodput: 200s counted by the aggregator from just before ab started to when it exited, over
    ab's wall seconds; the statuses (and so shed/s and "other"): up to when the aggregator settled, so that the
    answers to requests ab gave up on at its time limit count too."""
    ok = run.at_end.minus(run.before).statuses.get(OK, 0.0)
    settled = run.settled.minus(run.before)
    statuses, elsewhere = whole(settled.statuses), whole(settled.elsewhere)
    shed = statuses.get(SHED, 0) + elsewhere.get(SHED, 0)
    other = {status: count for status, count in _added(statuses, elsewhere).items() if status not in (OK, SHED)}
    return {
        "path": path.name,
        "n": n,
        "clients": clients,
        "seconds": round(run.seconds, 2),
        "goodput": _rate(ok, run.seconds),
        "shed_per_s": _rate(shed, run.seconds),
        "statuses": statuses,
        "statuses_elsewhere": elsewhere,
        "other": other,
        "admission_shed": int(round(settled.admission_shed)),
        "ab": ab,
        "health": health,
        "main_health": main_health,
        "peak_rss_mib": peak_rss_mib,
        "out_of_memory": out_of_memory,
    }


def _added(one: Dict[str, int], two: Dict[str, int]) -> Dict[str, int]:
    return {key: one.get(key, 0) + two.get(key, 0) for key in sorted(set(one) | set(two))}


def _rate(count: float, seconds: float) -> float:
    return round(count / seconds, 1) if seconds > 0 else 0.0


def compare_lower(rows: List[Dict]) -> None:
    """Sets each row's best_lower (the best goodput among the lower client counts of its path and n, None for the
    lowest) and goodput_vs_best_lower (its goodput as a percentage of that; None without one)."""
    for current in rows:
        lower = [
            other["goodput"]
            for other in rows
            if other["path"] == current["path"]
            and other["n"] == current["n"]
            and other["clients"] < current["clients"]
            and other.get("goodput") is not None
        ]
        best = max(lower, default=None)
        current["best_lower"] = best
        current["goodput_vs_best_lower"] = (
            round(100 * current["goodput"] / best, 1) if best and current.get("goodput") is not None else None
        )


@dataclass(frozen=True)
class Limits:
    """What a row must meet: goodput at least goodput_share of the best lower count's, every health check within
    health_limit_ms."""

    goodput_share: float
    health_limit_ms: float

    def as_dict(self) -> Dict:
        return asdict(self)


def checks(rows: List[Dict], limits: Limits, stopped: Optional[str]) -> Dict[str, List[str]]:
    """Each requirement and how the run missed it (an empty list: met). stopped: why the run stopped before its last
    row (a service gone), or None."""
    # Its first line names the service, its exit and the run; the log's tail is in clients.md once.
    alive = [stopped.splitlines()[0]] if stopped else []
    health, statuses, goodput = [], [], []
    for found in rows:
        where = "%s n=%d, %d clients" % (found["path"], found["n"], found["clients"])
        alive += ["%s: %s's log has an OutOfMemoryError" % (where, service) for service in found["out_of_memory"]]
        probe = found["health"]
        if probe["over_limit"] or probe["failures"] or not probe["checks"]:
            health.append("%s: %s" % (where, health_text(probe)))
        if found["other"]:
            statuses.append("%s: answers other than 200 or 503: %s" % (where, counts_text(found["other"])))
        if found["ab"].get("wrong_bodies"):
            statuses.append(
                "%s: %d answers of 200 with a body of the wrong length" % (where, found["ab"]["wrong_bodies"])
            )
        if found["ab"].get("error"):
            statuses.append("%s: ab: %s" % (where, found["ab"]["error"]))
        share = found.get("goodput_vs_best_lower")
        if not found["goodput"]:
            goodput.append("%s: no 200 at all" % where)
        elif share is not None and share < 100 * limits.goodput_share:
            goodput.append(
                "%s: goodput %.1f/s is %.0f %% of the best lower count's %.1f/s (below %.0f %%)"
                % (where, found["goodput"], share, found["best_lower"], 100 * limits.goodput_share)
            )
    return {
        "alive_no_out_of_memory": alive,
        "health_within_limit": health,
        "only_200_or_503": statuses,
        "goodput_holds": goodput,
    }


def health_text(probe: Dict) -> str:
    if not probe["checks"]:
        return "no health check was made at %s" % probe["url"]
    text = "health at %s took up to %.0f ms, %d of %d checks over %.0f ms" % (
        probe["url"],
        probe["max_ms"],
        probe["over_limit"],
        probe["checks"],
        probe["limit_ms"],
    )
    if probe["failures"]:
        text += ", %d failed: %s" % (
            probe["failures"],
            "; ".join(
                "%s (%d, first at %.1f s)" % (reason, seen["count"], seen["first_s"])
                for reason, seen in probe["failure_reasons"].items()
            ),
        )
    return text


def counts_text(values: Dict[str, int]) -> str:
    """ "500 3, connect 2", or "0"."""
    return ", ".join("%s %d" % item for item in values.items() if item[1]) or "0"


def table(rows: List[Dict], limits: Limits) -> str:
    """clients.md's table: a row per path, n and client count."""
    with_main = any(found.get("main_health") for found in rows)
    heads = [
        "path",
        "n",
        "clients",
        "goodput/s",
        "shed/s",
        "other",
        "ab errors",
        "health max ms",
        "health p99 ms",
        "health > %g s" % (limits.health_limit_ms / 1000),
    ]
    if with_main:
        heads += ["main-port health max ms", "main-port p99 ms", "main-port > %g s" % (limits.health_limit_ms / 1000)]
    heads += ["aggregator peak RSS MiB", "goodput vs best lower"]
    lines = ["| " + " | ".join(heads) + " |", "|" + " --- |" * len(heads)]
    for found in rows:
        cells = [
            found["path"],
            str(found["n"]),
            str(found["clients"]),
            "%.1f" % found["goodput"],
            "%.1f" % found["shed_per_s"],
            counts_text(found["other"]),
            counts_text(found["ab"]["errors"]) if not found["ab"].get("error") else "ab failed",
        ]
        cells += _health_cells(found["health"])
        if with_main:
            cells += _health_cells(found.get("main_health"))
        rss = found["peak_rss_mib"].get("aggregator-service")
        cells += ["–" if rss is None else "%.0f" % rss, verdict(found.get("goodput_vs_best_lower"), limits)]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _health_cells(probe: Optional[Dict]) -> List[str]:
    if not probe:
        return ["–"] * 3
    over = str(probe["over_limit"]) + (" (+%d failed)" % probe["failures"] if probe["failures"] else "")
    return [
        "–" if probe["max_ms"] is None else "%.0f" % probe["max_ms"],
        "–" if probe["p99_ms"] is None else "%.0f" % probe["p99_ms"],
        over,
    ]


def verdict(share: Optional[float], limits: Limits) -> str:
    """ "93 % pass", "52 % FAIL", or "–" for the lowest client count."""
    if share is None:
        return "–"
    return "%.0f %% %s" % (share, "pass" if share >= 100 * limits.goodput_share else "FAIL")


def open_files_soft_limit(soft: int, hard: int, needed: int, infinity: int) -> int:
    """The soft open-files limit to set so that ab can open needed sockets: the hard limit (or, when that is
    unlimited, needed if above soft). Raises ValueError saying how to raise the hard limit when it is too low."""
    if hard != infinity and hard < needed:
        raise ValueError(
            "the open-files hard limit is %d, below the %d this run needs (its most clients + 100): ab opens a socket "
            "per client. Raise it before starting the lab, e.g. `ulimit -Hn %d` as root in the shell that starts it "
            "(then `ulimit -n %d`), `--ulimit nofile=%d:%d` for a container, or a nofile line in "
            "/etc/security/limits.conf" % (hard, needed, needed, needed, needed, needed)
        )
    if hard == infinity:
        return max(soft, needed) if soft != infinity else soft
    return hard
