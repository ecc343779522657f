"""The load generators behind one interface: ab (the closed loop, LOAD=closed) and Vegeta (the open loop, LOAD=open).
Each warms a path up, measures one repeat of it, and loads it beside others (MIX); lab.measure.bench measures around
them
(CPU, metrics, RSS, bytes). A third generator (wrk2, h2load) is one more class with `name`, `warm`, `measure` and
`mixed`, picked in for_settings."""

import os
import re
import subprocess
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Protocol, cast

from ..core import warmup
from ..core.settings import Settings
from ..core.warmup import WarmUp
from ..host import placement
from . import ab_output, open_loop

# A timed run's first ab run asks for this share of DURATION at the pace lately, and the next ones for half of what is
# left at the pace just measured: a path that slowed down then still ends near DURATION, not past it.
FIRST_PART = 0.9
# ab's -t: as many requests as the time allows, up to this many.
MAX_REQUESTS = 10_000_000
_NOT_2XX = re.compile(r"^WARNING: Response code not 2xx \((\d{3})\)")
# The line after which ab -v 2 prints its report.
_REPORT_START = "..done"


@dataclass
class Load:
    """One measured repeat as its generator saw it: its part of the run's record (figures, with `error` when it
    failed), the raw files it adds to record["raw"], and the requests answered, over which the CPU is shared."""

    figures: Dict
    raw: Dict[str, str] = field(default_factory=dict)
    answered: int = 0

    @property
    def error(self) -> Optional[str]:
        return self.figures.get("error")


class LoadGenerator(Protocol):
    # The generator as lab.host.cpu names its CPU in a run's record ("ab", "vegeta").
    name: str

    def warm(
        self,
        url: str,
        expected_body: str,
        point: int,
        raw_dir: str,
        slug: str,
        log: Callable[[str], None],
        watch_jit: Callable[[], Callable[[], Optional[float]]],
    ) -> WarmUp:
        """WARMUP_SECONDS of the load at point (concurrency, or rate), discarded. watch_jit() starts watching the
        services' JIT and returns a function that gives the largest share of the time since it was last asked that a
        service's JIT compiled (None: unknown), for a warm-up that goes on while the JIT compiles."""
        ...

    def measure(
        self,
        url: str,
        expected_body: str,
        point: int,
        raw_dir: str,
        slug: str,
        repeat: int,
        pace: Optional[float],
        log: Callable[[str], None],
        after_load: Callable[[], None],
        stop_when: Callable[[], bool],
    ) -> Load:
        """One measured repeat at point; after_load() is called as soon as the load ends (before the generator reads
        its results back), stop_when() may end it early. repeat: its number, for the log; pace: the closed loop's
        requests a second lately."""
        ...

    def mixed(self, url: str, expected_body: str, point: int, seconds: float, raw_dir: str, slug: str) -> Dict:
        """A path's load for seconds while the other MIX paths are loaded too (lab.mix): its goodput (exact 200
        answers a second), p99 and non-200 answers by status, from whatever the generator can tell."""
        ...


def for_settings(settings: Settings, vegeta: Optional[str], minute_s: Optional[float] = None) -> LoadGenerator:
    """The generator LOAD names: Vegeta (installed by lab.tools, at `vegeta`) for an open loop, else ab."""
    if settings.open_loop:
        assert vegeta, "an open loop needs Vegeta (lab.host.tools installs it)"
        return Vegeta(vegeta, settings, minute_s)
    return Ab(settings)


def requests_for(pace: float, concurrency: int, seconds: float) -> int:
    """The requests that keep concurrency clients busy for about seconds at pace requests a second, in whole rounds of
    concurrency: ab's clients start together, and on a path whose requests take seconds (100 x 1000 squares of
    rest/unary: 2.5 s each) they finish together too, in waves, so a run cut at a time (ab -t) ends in the middle of
    one, counting a part of it and waiting for the rest: three 20 s runs gave 36, 43 and 45 req/s where whole rounds
    gave 45 to 50."""
    return concurrency * max(1, round(pace * seconds / concurrency))


@dataclass
class Rounds:
    """What the ab runs of one warm-up or measured repeat gave: their report and curve as one run's, or an error."""

    requests: int = 0
    runs: int = 0
    reports: List[ab_output.AbReport] = field(default_factory=list)
    report: Optional[ab_output.AbReport] = None
    curve: Optional[List[float]] = None
    error: Optional[str] = None
    exit_code: int = 0


class Ab:
    """ApacheBench, the closed loop: point clients, each sending its next request once the last was answered."""

    name = "ab"

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    def warm(self, url, expected_body, point, raw_dir, slug, log, watch_jit) -> WarmUp:
        log(
            "  warm-up: %gs at %d at a time (discarded), longer while the JIT compiles"
            % (self.settings.warmup_s, point)
        )
        warm = self.warm_rounds(url, point, os.path.join(raw_dir, slug + ".txt"), watch_jit(), log)
        said = {True: "", False: ", the JIT still compiling", None: ", the JIT not watched (no metrics page)"}
        log("  warm after %.0fs%s" % (warm.seconds, said[warm.jit_settled]))
        return warm

    def warm_rounds(
        self, url: str, point: int, report_path: str, jit_busy: Callable[[], Optional[float]], log
    ) -> WarmUp:
        """ab runs of whole rounds until WARMUP_SECONDS have passed and the JIT has settled (or JIT_WAIT times
        WARMUP_SECONDS): each lasts about a quarter of WARMUP_SECONDS at the pace of the one before (the first is one
        round), so that the last one's pace, measured like a measured run's, counts the requests of the first."""
        rule = warmup.Rule(self.settings.warmup_s)
        pace: List[Optional[float]] = [None]

        def next_requests(reports: List[ab_output.AbReport]) -> Optional[int]:
            pace[0] = reports[-1].rps or pace[0]
            seconds = rule.next_stretch(jit_busy())
            return requests_for(pace[0], point, seconds) if pace[0] and seconds else None

        rounds = self.rounds(url, point, point, report_path, None, next_requests)
        if rounds.error:
            why = "ab exit code %d" % rounds.exit_code if rounds.exit_code else rounds.error
            log("  warning: the warm-up ended with %s (see %s)" % (why, report_path))
            return WarmUp(None, rule.elapsed())
        return rule.outcome(pace[0])

    def measure(self, url, expected_body, point, raw_dir, slug, repeat, pace, log, after_load, stop_when) -> Load:
        settings = self.settings
        requests = settings.requests or requests_for(pace or 0.0, point, settings.duration_s * FIRST_PART)
        log(
            "  measuring: %d requests, %d at a time (repeat %d)%s"
            % (
                requests,
                point,
                repeat,
                ""
                if settings.requests
                else ", then more to fill %gs (%.1f a second lately)" % (settings.duration_s, pace or 0.0),
            )
        )
        closed = self.closed_loop(
            url, point, requests, os.path.join(raw_dir, slug + ".txt"), os.path.join(raw_dir, slug + ".csv")
        )
        after_load()
        load = Load({"requests": closed.requests}, {"csv": "raw/%s.csv" % slug})
        if closed.report is None:
            load.figures["error"] = closed.error or "ab gave no report"
            return load
        load.figures.update(ab_figures(expected_body, closed.report, closed.curve))
        if closed.runs > 1:
            load.figures["ab_runs"] = closed.runs
        load.answered = closed.report.completed
        return load

    def mixed(self, url, expected_body, point, seconds, raw_dir, slug) -> Dict:
        """A mixed path's figures from one ab run of seconds (raw/<slug>.txt keeps its report and statuses). ab prints
        each non-2xx status when run with -v 2 (one "WARNING: Response code not 2xx (503)" line each) and checks each
        answer's length against its first answer's; an answer is exact when it is a 2xx of the expected body's
        length."""
        csv_path = os.path.join(raw_dir, slug + ".csv")
        verbose_path = os.path.join(raw_dir, slug + ".v2.txt")
        with open(verbose_path, "w") as output:
            # -v 2 prints every answer's headers too: to a file, read a line at a time, not held in memory.
            done = subprocess.run(
                mixed_ab_command(url, point, seconds, self.settings.ab_timeout_s, csv_path),
                stdout=output,
                stderr=subprocess.STDOUT,
                preexec_fn=placement.pin("load_generator"),
            )
        statuses, report_text = read_verbose(verbose_path)
        os.remove(verbose_path)
        with open(os.path.join(raw_dir, slug + ".txt"), "w") as kept:
            kept.write(report_text + "\nnon-2xx by status: %s\n" % statuses)
        if done.returncode != 0:
            return {"error": "ab exited with code %d (see raw/%s.txt)" % (done.returncode, slug)}
        report = ab_output.parse_report(report_text)
        return mixed_closed_figures(
            report, _read_curve(csv_path, report.completed), statuses, len(expected_body.encode())
        )

    def closed_loop(self, url: str, point: int, requests: int, report_path: str, csv_path: str) -> Rounds:
        """REQUESTS requests in one ab run; or, by time, ab runs of whole rounds one after another until DURATION is
        filled to within half a round, read as one run: ab cannot stop at a time without cutting a round in two (ab -t
        counts only the requests done by then and wastes the rest, on rest/unary up to 12 % of 20 s)."""
        settings = self.settings

        def next_requests(reports: List[ab_output.AbReport]) -> Optional[int]:
            left = settings.duration_s - sum(r.time_taken_s for r in reports)
            round_s = point / reports[-1].rps if reports[-1].rps > 0 else float("inf")
            if settings.requests or left < round_s / 2:
                return None
            # Half of what is left, at least a round: a pace that drops meanwhile overruns DURATION by little.
            return point * max(1, int(left / 2 / round_s))

        return self.rounds(url, point, requests, report_path, csv_path, next_requests)

    def rounds(
        self,
        url: str,
        point: int,
        requests: int,
        report_path: str,
        csv_path: Optional[str],
        next_requests: Callable[[List[ab_output.AbReport]], Optional[int]],
    ) -> Rounds:
        """The one loop of ab runs of whole rounds of point requests: the first of `requests`, each next one of
        next_requests(the reports so far), until it says None; read as one run (one report, one curve, the raw
        report of every run in report_path)."""
        outcome = Rounds()
        curves: List[Optional[List[float]]] = []
        texts: List[str] = []
        while True:
            command = ab_output.ab_command(url, requests, point, self.settings.ab_timeout_s, csv_path)
            done, text = run_ab(command, report_path)
            texts.append("--- ab run %d: %d requests, %d at a time ---\n%s" % (len(texts) + 1, requests, point, text))
            outcome.requests += requests
            outcome.runs += 1
            if done.returncode != 0:
                outcome.exit_code = done.returncode
                outcome.error = "ab exited with code %d: %s" % (done.returncode, _last_line(done.stderr))
                break
            try:
                report = ab_output.parse_report(done.stdout)
                curve = _read_curve(csv_path, report.completed) if csv_path else None
            except ab_output.AbOutputError as error:
                outcome.error = "cannot read ab's output: %s" % error
                break
            outcome.reports.append(report)
            curves.append(curve)
            following = next_requests(outcome.reports)
            if not following:
                break
            requests = following
        if len(texts) > 1:
            with open(report_path, "w") as handle:
                handle.write("\n".join(texts))
        if outcome.error or not outcome.reports:
            return outcome
        usable = cast(List[List[float]], curves) if all(curves) else []
        outcome.curve = ab_output.merge_curves(usable, [r.completed for r in outcome.reports]) if usable else None
        outcome.report = ab_output.merge(outcome.reports, outcome.curve)
        if csv_path and outcome.curve and len(curves) > 1:
            with open(csv_path, "w") as handle:
                handle.write(ab_output.write_percentile_csv(outcome.curve))
        return outcome


class Vegeta:
    """Vegeta, the open loop (lab.open_loop): point requests a second, whether or not the earlier ones were answered."""

    name = "vegeta"

    def __init__(self, binary: str, settings: Settings, minute_s: Optional[float] = None) -> None:
        self.binary, self.settings, self.minute_s = binary, settings, minute_s

    def warm(self, url, expected_body, point, raw_dir, slug, log, watch_jit) -> WarmUp:
        settings = self.settings
        log("  warm-up: %gs at %d requests a second (discarded)" % (settings.warmup_s, point))
        outcome = open_loop.run(
            self.binary, url, expected_body, point, settings.warmup_s, settings.ab_timeout_s, raw_dir, slug
        )
        if "error" in outcome:
            log("  warning: the warm-up failed: %s" % outcome["error"])
        return WarmUp(None, settings.warmup_s)

    def measure(self, url, expected_body, point, raw_dir, slug, repeat, pace, log, after_load, stop_when) -> Load:
        settings = self.settings
        log("  measuring: %d requests a second for %gs (repeat %d)" % (point, settings.duration_s, repeat))
        outcome = open_loop.run(
            self.binary,
            url,
            expected_body,
            point,
            settings.duration_s,
            settings.ab_timeout_s,
            raw_dir,
            slug,
            after_attack=after_load,
            minute_s=self.minute_s,
            stop_when=stop_when,
        )
        return Load(outcome, answered=outcome.get("ok") or 0)

    def mixed(self, url, expected_body, point, seconds, raw_dir, slug) -> Dict:
        outcome = open_loop.run(
            self.binary, url, expected_body, point, seconds, self.settings.ab_timeout_s, raw_dir, slug
        )
        return mixed_open_figures(outcome)


def ab_figures(expected_body: str, report: ab_output.AbReport, curve: Optional[List[float]]) -> Dict:
    """ab's part of a run's record: counts, throughput and latency, and what was verified of the answers."""
    expected_bytes = len(expected_body.encode())
    # The pre-check compared one answer with the exact expected body; during the run ab compares every
    # response's length with the first one's (a mismatch is a failed request), and the first one's with the
    # expected body's here, so every counted response had the expected answer's length.
    verified = {
        "pre_check": "exact body",
        "expected_bytes": expected_bytes,
        "response_bytes": report.document_length,
        "length_checked": report.completed,
        "length_mismatches": report.failed_breakdown["length"],
        "passed": (
            report.completed - report.failed_breakdown["length"] - report.non2xx
            if report.document_length == expected_bytes
            else 0
        ),
    }
    return {
        "verified": verified,
        "completed": report.completed,
        "failed": report.failed,
        "failed_breakdown": report.failed_breakdown,
        "non2xx": report.non2xx,
        "rps": report.rps,
        "time_taken_s": report.time_taken_s,
        "latency_ms": latency(report, curve),
        "latency_table_ms": {str(k): v for k, v in report.percentile_table_ms.items()},
        "latency_curve_ms": curve,
    }


def latency(report: ab_output.AbReport, curve: Optional[List[float]]) -> Dict[str, Optional[float]]:
    """Mean, p50, p90, p99 and max in ms.

    The percentiles come from ab's -e CSV, which has microsecond resolution; ab's printed table rounds to
    whole milliseconds, too coarse for a fast path. Both come from the same sorted list inside ab.
    """
    if curve:
        return {"mean": report.mean_ms, "p50": curve[50], "p90": curve[90], "p99": curve[99], "max": curve[100]}
    table = report.percentile_table_ms
    return {
        "mean": report.mean_ms,
        "p50": table.get(50),
        "p90": table.get(90),
        "p99": table.get(99),
        "max": table.get(100),
    }


def run_ab(command: List[str], report_path: str, echo_command: bool = False):
    """Runs ab and keeps its report (with its stderr, and the command when echo_command) in report_path; returns
    the finished process and that text."""
    # subprocess.run kills ab if the lab is interrupted while it waits, so no ab outlives the lab.
    done = subprocess.run(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=placement.pin("load_generator")
    )
    text = done.stdout + ("\n--- ab stderr ---\n" + done.stderr if done.stderr.strip() else "")
    with open(report_path, "w") as handle:
        handle.write(("$ %s\n" % " ".join(command) if echo_command else "") + text)
    return done, text


def _read_curve(csv_path: str, completed: int) -> Optional[List[float]]:
    if not completed or not os.path.exists(csv_path):
        return None
    with open(csv_path) as handle:
        return ab_output.parse_percentile_csv(handle.read(), completed)


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else "(no message)"


def mixed_ab_command(url: str, concurrency: int, seconds: float, timeout_s: int, csv_path: str) -> List[str]:
    """ab for seconds at a concurrency, printing each non-2xx status (-v 2)."""
    command = ab_output.ab_command(url, MAX_REQUESTS, concurrency, timeout_s, csv_path, seconds=seconds)
    return command[:1] + ["-v", "2"] + command[1:]


def read_verbose(path: str):
    """(non-2xx count by status, the report) of ab -v 2's output."""
    statuses: Dict[str, int] = {}
    report: List[str] = []
    with open(path, errors="replace") as handle:
        for line in handle:
            match = _NOT_2XX.match(line)
            if match:
                statuses[match.group(1)] = statuses.get(match.group(1), 0) + 1
            elif _REPORT_START in line:
                report = []
            else:
                report.append(line)
    return dict(sorted(statuses.items())), "".join(report)


def mixed_closed_figures(
    report: ab_output.AbReport, curve: Optional[List[float]], statuses: Dict[str, int], expected_bytes: int
) -> Dict:
    """A mixed path's figures from ab. When ab's first answer had the expected body's length, every other length is
    a length failure, the non-2xx problem bodies among them, so the exact answers are the completed less those; when
    the first answer was something else (a 503), ab compared lengths against it, and only the status is known."""
    answered_2xx = report.completed - report.non2xx
    length_checked = report.document_length == expected_bytes
    exact = report.completed - report.failed_breakdown["length"] if length_checked else answered_2xx
    exact = max(0, min(exact, answered_2xx))
    transport = {kind: count for kind, count in report.failed_breakdown.items() if kind != "length" and count}
    return {
        "seconds": report.time_taken_s,
        "completed": report.completed,
        "ok": exact,
        "goodput": round(exact / report.time_taken_s, 2) if report.time_taken_s else None,
        "p99_ms": curve[99] if curve else report.percentile_table_ms.get(99),
        "non200": report.non2xx,
        "statuses": statuses,
        "transport_errors": transport,
        "length_checked": length_checked,
    }


def mixed_open_figures(outcome: Dict) -> Dict:
    """A mixed path's figures from Vegeta: goodput and p99 of the exact answers, non-200 by status."""
    if "error" in outcome:
        return {"error": outcome["error"]}
    errors = outcome.get("errors") or {}
    statuses = {
        ("503" if kind == "shed_503" else kind[len("http_") :]): count
        for kind, count in errors.items()
        if kind == "shed_503" or kind.startswith("http_")
    }
    transport = {kind: count for kind, count in errors.items() if kind in ("timeout", "connection", "other")}
    return {
        "seconds": outcome["duration_s"],
        "completed": outcome["completed"],
        "ok": outcome["ok"],
        "goodput": outcome["rps"],
        "p99_ms": outcome["latency_ms"]["p99"],
        "non200": outcome["non2xx"],
        "statuses": dict(sorted(statuses.items())),
        "transport_errors": transport,
        "wrong_answers": errors.get("wrong_answer", 0),
    }
