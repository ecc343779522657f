"""The design's own command on fresh services (loadtest/run.sh --design): for each path, our three services started
as the lab starts them with JVM defaults (as `java -jar` and `mvn spring-boot:run` start them) or the project's
jvm.options, and with the aggregator's own deadline; the article's warm-up of `ab -n 100`, then
`ab -n 1000 -c 100 .../<path>/1000`. Every answer that is not a 2xx is counted, and the aggregator's sheds with it: a
shed is an error the user gets, and on this load there should be none. Exits 1 when any answer was not a 2xx.

On a slower machine: loadtest/slow-machine.sh 100 loadtest/run.sh --design (one core's worth of this one).
"""

import argparse
from typing import Dict, List

from ..core import catalogue, metrics, settings
from ..load import ab_output, http_check
from ..results import results
from ..stage.deadlines import Deadlines
from . import base

ALL_PATHS = ("rest/unary", "rest/h2c", "grpc/unary", "grpc/pingpong", "grpc/stream")
SHED = "aggregator_admission_deadline_shed_total"
# ab's -s: as long as ab waits for an answer, well past the aggregator's own deadline.
AB_TIMEOUT_S = 120


class Design(base.Experiment):
    name = "design"
    about = "The design's ab -n 1000 -c 100 on fresh services, every path: the answers that are not 2xx"
    document = "design.json"
    summary = "design.md.j2"
    prefix = "design-"

    @classmethod
    def add_options(cls, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--jvm", choices=("defaults", "options"), default="defaults", help="or jvm.options")
        parser.add_argument("--paths", nargs="+", choices=ALL_PATHS, default=list(ALL_PATHS))
        parser.add_argument("--requests", type=int, default=1000, help="ab -n of each measured run")
        parser.add_argument("--concurrency", type=int, default=100, help="ab -c")
        parser.add_argument("--n", type=int, default=1000, help="squares per request")
        parser.add_argument("--warmup", type=int, default=100, help="ab -n of each path's warm-up")
        parser.add_argument("--deadline", type=int, default=30, help="the aggregator's deadline, its own default")
        parser.add_argument("--out", help="the results folder (default loadtest/results/design-<time>)")

    @classmethod
    def checked(cls, options: argparse.Namespace, error) -> None:
        if min(options.requests, options.concurrency, options.n, options.warmup, options.deadline) < 1:
            error("--requests, --concurrency, --n, --warmup and --deadline must be at least 1")

    def measure(self, out: str) -> Dict:
        options = self.options
        java_opts = settings.service_jvm_options() if options.jvm == "options" else ""
        lab = base.lab_settings(
            network=[catalogue.LOOPBACK],
            floor=False,
            tls=[catalogue.PLAINTEXT],
            paths=options.paths,
            java_opts=java_opts,
        )
        prepared = base.prepare(lab, options.paths)
        deadlines = Deadlines(options.deadline, None, AB_TIMEOUT_S, "the aggregator's own")
        rows: List[Dict] = []
        record = {
            "environment": prepared.describe(),
            "settings": {
                "jvm": options.jvm,
                "java_opts": java_opts,
                "requests": options.requests,
                "concurrency": options.concurrency,
                "n": options.n,
                "warmup_requests": options.warmup,
                "deadline_s": options.deadline,
                "paths": options.paths,
            },
            "started_at": results.now(),
            "rows": rows,
        }
        for path in options.paths:
            print("[lab] %s on fresh services (JVM %s)" % (path, options.jvm), flush=True)
            with base.services_up(prepared, out, deadlines, log_suffix="-" + path.replace("/", "-")) as (_, up):
                aggregator = base.aggregator_of(up)
                url = "%s/%s/%d" % (aggregator.base_url, path, options.n)
                ab_output.run(url, options.warmup, options.concurrency, AB_TIMEOUT_S)
                report = ab_output.parse_report(ab_output.run(url, options.requests, options.concurrency, AB_TIMEOUT_S))
                page = http_check.get(aggregator.metrics_urls[0], 10)[2]
            answered = ab_output.answered_2xx(report)
            rows.append(
                {
                    "path": path,
                    "answered": answered,
                    "not_2xx": report.completed - answered,
                    "shed": int(metrics.total(metrics.parse(page), SHED)),
                    "rps": round(answered / report.time_taken_s, 2) if report.time_taken_s else 0.0,
                    "p99_ms": report.percentile_table_ms.get(99, 0),
                }
            )
            print(
                "[lab]   %d of %d answered 2xx, %d shed, p99 %d ms"
                % (answered, report.completed, rows[-1]["shed"], rows[-1]["p99_ms"]),
                flush=True,
            )
        return record

    def checks(self, record: Dict) -> Dict[str, List[str]]:
        return {
            "every_answer_2xx": [
                "%s: %d of %d answers not 2xx (%d shed by the admission, warm-up included)"
                % (row["path"], row["not_2xx"], row["answered"] + row["not_2xx"], row["shed"])
                for row in record["rows"]
                if row["not_2xx"]
            ]
        }


main = Design.main
