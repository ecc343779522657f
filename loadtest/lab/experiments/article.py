"""The article's own code and ours, side by side in one run: the measure of record for "how far ahead of the
article are we", never figures from another run or another machine.

The article's code is `grpc/grpc-vs-rest` in github.com/vinsguru/vinsguru-blog-code-samples, built unchanged
(`mvn -q package -DskipTests` in that folder: Spring Boot 2.3, grpc-java 1.32). This project does not hold a copy:
ARTICLE_DIR is the user's checkout. Both systems serve the same three paths on the same ports (aggregator 8080,
REST square service 7575, gRPC square service 6565), so they run one after the other, never together:

    for each round: the article's three jars, then ours, each started with JVM defaults (no jvm.options: the
    issue's comparison is what `java -jar` gives a user), each JVM in a session of its own as the lab starts its
    services; for each path a warm-up of `ab -n WARMUP`, then `ab -n REQUESTS -c CONCURRENCY .../<path>/N`
    with the aggregator's and the path's square service's CPU time read from /proc around it; after the paths,
    each JVM's peak resident memory (VmHWM since it started); then the three are stopped.

The table gives each system's median over the rounds, and ours against the article's in the same run.

    loadtest/run.sh --article ARTICLE_DIR [--rounds 2] [--requests 1000] [--concurrency 100] [--n 1000]
"""

import argparse
import os
import statistics
from dataclasses import asdict, dataclass, field
from typing import Callable, Dict, List, Sequence

from ..core.errors import LabError
from ..core.paths import REPO
from ..host import cpu, environment, tools
from ..host.processes import Processes
from ..load import ab_output, http_check
from ..results import results
from . import base

PATHS = ("rest/unary", "grpc/unary", "grpc/stream")
PORTS = (8080, 7575, 6565)
AGGREGATOR, REST, GRPC = "aggregator", "rest square", "grpc square"
# Each path's square service, whose CPU is the path's with the aggregator's.
SQUARE_OF = {"rest/unary": REST, "grpc/unary": GRPC, "grpc/stream": GRPC}
TICKS_PER_S = os.sysconf("SC_CLK_TCK")


# Where our aggregator's metrics are (the article's has none).
METRICS_URL = "http://127.0.0.1:%d/actuator/prometheus" % PORTS[0]
# ab's -s: how long ab waits for an answer.
AB_TIMEOUT_S = 120


@dataclass(frozen=True)
class System:
    """One system's three jars (started in this order: the square services, then the aggregator), and the arguments
    of each."""

    name: str
    jars: Dict[str, str]
    arguments: Dict[str, List[str]] = field(default_factory=dict)


def article(folder: str) -> System:
    return System(
        "article",
        {
            REST: os.path.join(folder, "rest-square-service/target/rest-square-service-0.0.1-SNAPSHOT.jar"),
            GRPC: os.path.join(folder, "grpc-square-service/target/grpc-square-service-0.0.1-SNAPSHOT.jar"),
            AGGREGATOR: os.path.join(folder, "aggregator-service/target/aggregator-service-0.0.1-SNAPSHOT.jar"),
        },
    )


# Our three services' modules, as the lab builds them.
OUR_MODULES = {REST: "square-rest-service", GRPC: "square-grpc-service", AGGREGATOR: "aggregator-service"}


def ours(jars: Dict[str, str]) -> System:
    """Ours from the jars tools.ensure_jars found (or built), keyed by module."""
    return System(
        "ours",
        {service: jars[module] for service, module in OUR_MODULES.items()},
        # As long as ab waits, as the lab gives it: the article's aggregator has no deadline and sheds nothing, and
        # ours would shed (503) what it does not expect to answer within its own 30 s.
        {AGGREGATOR: ["--aggregator.deadline=%ds" % AB_TIMEOUT_S]},
    )


@dataclass(frozen=True)
class Measured:
    system: str
    round: int
    path: str
    rps: float
    p99_ms: int
    cpu_us_per_call: float
    completed: int
    answered: int
    failed: int
    non2xx: int


@dataclass(frozen=True)
class Options:
    rounds: int = 2
    requests: int = 1000
    concurrency: int = 100
    n: int = 1000
    warmup: int = 100
    java: str = "java"
    start_timeout_s: float = 180.0


class Article(base.Experiment):
    name = "article"
    about = (
        "The article's own code (grpc/grpc-vs-rest, built unchanged in ARTICLE_DIR) and ours, alternating, in one run"
    )
    document = "article.json"
    summary = "article.md.j2"
    prefix = "article-"

    @classmethod
    def add_options(cls, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("article_dir", help="the article's grpc/grpc-vs-rest folder, after `mvn package`")
        parser.add_argument("--rounds", type=positive, default=2)
        parser.add_argument("--requests", type=positive, default=1000, help="ab -n of each measured run")
        parser.add_argument("--concurrency", type=positive, default=100, help="ab -c")
        parser.add_argument("--n", type=positive, default=1000, help="squares per request")
        parser.add_argument("--warmup", type=positive, default=100, help="ab -n of each path's warm-up")
        parser.add_argument("--out", help="the results folder (default loadtest/results/article-<time>)")

    def measure(self, out: str) -> Dict:
        args = self.options
        options = Options(args.rounds, args.requests, args.concurrency, args.n, args.warmup)
        return dict(_run(article(args.article_dir), _our_jars, options, out), started_at=results.now())

    def checks(self, record: Dict) -> Dict[str, List[str]]:
        return {
            "every_answer_2xx": [
                "%s's %s, round %d: %d of %d answered 2xx (%d not 2xx): its req/s counts only those"
                % (m["system"], m["path"], m["round"], m["answered"], m["completed"], m["non2xx"])
                for m in record["measured"]
                if m["answered"] < record["options"]["requests"]
            ]
        }

    def facts(self, record: Dict) -> Dict:
        return {"tables": tables([Measured(**m) for m in record["measured"]], record["peak_rss_mib"])}


main = Article.main


def _our_jars() -> System:
    """Ours, building missing or stale jars first as loadtest/run.sh does (not with LAB_SKIP_BUILD=1)."""
    skip_build = os.environ.get("LAB_SKIP_BUILD", "0") == "1"
    return ours(tools.ensure_jars(REPO, list(OUR_MODULES.values()), skip_build))


def positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError("not a whole number: %r" % text) from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1, got %d" % value)
    return value


def _run(theirs: System, build_ours: Callable[[], System], options: Options, out: str) -> Dict:
    """Both systems, round after round, alternating; the record of article.json."""
    missing = [jar for jar in theirs.jars.values() if not os.path.isfile(jar)]
    if missing:
        raise LabError(
            "the article's jar %s does not exist: build it first (mvn -q package -DskipTests in its folder)"
            % missing[0]
        )
    ours_ = build_ours()
    http_check.refuse_taken(PORTS, "both systems serve on %s, stop what listens there" % ", ".join(map(str, PORTS)))
    measured: List[Measured] = []
    peaks: Dict[str, Dict[str, List[float]]] = {theirs.name: {}, ours_.name: {}}
    for number in range(1, options.rounds + 1):
        for system in (theirs, ours_):
            print("[article] round %d of %d: %s" % (number, options.rounds, system.name), flush=True)
            found, peak = measure_system(system, number, options, out, PATHS)
            measured += found
            for service, mib in peak.items():
                peaks[system.name].setdefault(service, []).append(mib)
    return {
        "environment": environment.describe(REPO, options.java, ""),
        "options": asdict(options),
        "measured": [asdict(m) for m in measured],
        "peak_rss_mib": peaks,
    }


def measure_system(system: System, number: int, options: Options, out: str, paths: Sequence[str]):
    """The system's three services started (JVM defaults, the article's ports, which its code is wired to), each path
    warmed up and measured, then stopped: the paths' figures and each service's peak RSS."""
    with Processes() as processes:
        pids = {}
        for service in (REST, GRPC, AGGREGATOR):
            log = os.path.join(
                out, "logs", "%s-%d-%s-%s.log" % (system.name, number, "-".join(paths).replace("/", "-"), service)
            )
            command = [options.java, "-jar", system.jars[service]] + system.arguments.get(service, [])
            child = processes.start(command, log.replace(" ", "-"))
            pids[service] = child.pid
        # Every path answering 200 for n = 1: the article's services have no health endpoint.
        urls = [_url(path, 1) for path in paths]
        http_check.wait_answering(urls, pids, options.start_timeout_s, system.name)
        found = [_path(system, number, path, pids, options, out) for path in paths]
        peak = {service: cpu.peak_rss_mib(pid) for service, pid in pids.items()}
        return found, peak


def _path(system: System, number: int, path: str, pids: Dict[str, int], options: Options, out: str) -> Measured:
    url = _url(path, options.n)
    ab_output.run(url, options.warmup, options.concurrency, AB_TIMEOUT_S)
    measured_pids = [pids[AGGREGATOR], pids[SQUARE_OF[path]]]
    before = sum(cpu.process_ticks(pid) for pid in measured_pids)
    text = ab_output.run(url, options.requests, options.concurrency, AB_TIMEOUT_S)
    after = sum(cpu.process_ticks(pid) for pid in measured_pids)
    raw = os.path.join(out, "logs", "%s-%d-%s.txt" % (system.name, number, path.replace("/", "-")))
    with open(raw, "w") as handle:
        handle.write(text)
    report = ab_output.parse_report(text)
    answered = ab_output.answered_2xx(report)
    calls = answered * options.n
    measured = Measured(
        system.name,
        number,
        path,
        # Only whole answers count: a 503 shed or an error answered fast is no square served.
        round(answered / report.time_taken_s, 2) if report.time_taken_s else 0.0,
        report.percentile_table_ms.get(99, 0),
        round((after - before) / TICKS_PER_S / calls * 1e6, 1) if calls else 0.0,
        report.completed,
        answered,
        report.failed,
        report.non2xx,
    )
    print(
        "[article]   %-11s %8.2f req/s  p99 %6d ms  %6.1f us per call"
        % (path, measured.rps, measured.p99_ms, measured.cpu_us_per_call),
        flush=True,
    )
    return measured


def _url(path: str, n: int) -> str:
    return "http://127.0.0.1:%d/%s/%d" % (PORTS[0], path, n)


def tables(measured: List[Measured], peaks: Dict[str, Dict[str, List[float]]]) -> List[Dict]:
    """Each path's medians over the rounds, the article's and ours, and ours against the article's; each service's
    peak RSS in each round."""

    def median(system: str, path: str, field: str) -> float:
        return statistics.median(getattr(m, field) for m in measured if m.system == system and m.path == path)

    rows = []
    for path in PATHS:
        theirs, ours_ = median("article", path, "rps"), median("ours", path, "rps")
        rows.append(
            [
                path,
                "%.1f" % theirs,
                "%.1f" % ours_,
                "%.2fx" % (ours_ / theirs if theirs else 0.0),
                "%.2f s" % (median("article", path, "p99_ms") / 1000),
                "%.2f s" % (median("ours", path, "p99_ms") / 1000),
                "%.1f us" % median("article", path, "cpu_us_per_call"),
                "%.1f us" % median("ours", path, "cpu_us_per_call"),
            ]
        )
    heads = ["path", "article req/s", "ours req/s", "ours / article", "article p99", "ours p99"]
    heads += ["article CPU per call", "ours CPU per call"]
    peak_rows = [
        [service]
        + [", ".join("%.0f" % mib for mib in peaks.get(system, {}).get(service, [])) for system in ("article", "ours")]
        for service in (REST, GRPC, AGGREGATOR)
    ]
    return [
        {"heads": heads, "rows": [{"cells": cells} for cells in rows]},
        {"heads": ["peak RSS, MiB (each round)", "article", "ours"], "rows": [{"cells": c} for c in peak_rows]},
    ]
