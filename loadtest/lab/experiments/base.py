"""The one skeleton every experiment follows, from its options to its results folder: options (argparse, beside the
lab's knobs from the environment), a folder of its own, the stage (stack, jars, ports), the experiment's own
measuring, then its document written through lab.results (a $defs of results.schema.json), its summary rendered from
a template of loadtest/report/, and an exit status that says whether its promises held.

A new experiment is a subclass here, in lab/experiments, registered in COMMANDS (lab/experiments/__init__.py):
loadtest/run.sh --<name> runs it and --help lists it.
"""

import argparse
import contextlib
import dataclasses
import datetime
import os
import sys
from dataclasses import dataclass
from typing import Callable, Dict, Iterator, List, Optional, Sequence, Tuple

from ..core import catalogue
from ..core.errors import LabError, exit_status
from ..core.paths import REPO, RESULTS
from ..core.settings import Settings
from ..host import environment, tools
from ..host.processes import Processes, raise_on_term
from ..results import report, results
from ..stage import services, stacks, stage
from ..stage.deadlines import Deadlines


def folder(given: Optional[str], prefix: str, document: str) -> str:
    """An experiment's results folder: RESULTS_DIR (or --out), else loadtest/results/<prefix><time>; a LabError when it
    already holds that experiment's document."""
    found = os.path.abspath(given or os.path.join(RESULTS, prefix + datetime.datetime.now().strftime("%Y%m%d-%H%M%S")))
    if os.path.exists(os.path.join(found, document)):
        raise LabError("%s already holds results (%s): choose another RESULTS_DIR" % (found, document))
    os.makedirs(os.path.join(found, "logs"), exist_ok=True)
    return found


@dataclass
class Prepared:
    """What an experiment's services need before any starts: the first stack of its settings, its jars and where each
    service listens (ports checked free)."""

    settings: Settings
    stack: stacks.Stack
    jars: Dict[str, str]
    instances: List[services.Instance]

    def describe(self) -> Dict:
        """The document's environment: this machine, the JDK and the services' JVM options."""
        return environment.describe(REPO, self.stack.jdk.java, self.settings.java_opts)


def prepare(settings: Settings, path_names: Sequence[str]) -> Prepared:
    """The stack, jars and ports of the services these paths need; a LabError before anything starts when a JDK, a jar
    or a port is not there."""
    stack = stacks.resolve(settings, tools.java())[0]
    modules = catalogue.services_needed(catalogue.ALL[name] for name in path_names)
    jars = tools.ensure_jars(REPO, [stack.module(module) for module in modules], settings.skip_build)
    instances = services.layout(settings, modules)
    services.check_ports(instances, settings)
    return Prepared(settings, stack, jars, instances)


@contextlib.contextmanager
def services_up(
    prepared: Prepared,
    out: str,
    deadlines: Deadlines,
    network: str = catalogue.LOOPBACK,
    toxiproxy: Optional[str] = None,
    log_suffix: str = "",
) -> Iterator[Tuple[stage.Stage, List[services.Service]]]:
    """The square services and the aggregator, started as the lab starts them (each in a session of its own, on the
    knobs' ports, waited for until healthy) and stopped on the way out, whatever ends it; with toxiproxy (its binary)
    between them on a proxied network."""
    with Processes() as processes:
        lab_stage = stage.Stage(processes, prepared.settings, prepared.instances, prepared.jars, out)
        if toxiproxy:
            lab_stage.start_proxy(toxiproxy)
        lab_stage.start_squares(prepared.stack, log_suffix)
        with lab_stage.aggregator_on(catalogue.PROFILES[network], deadlines) as started:
            yield lab_stage, started


def aggregator_of(started: List[services.Service]) -> services.Service:
    return next(service for service in started if service.name == catalogue.AGGREGATOR)


def lab_settings(**fixed) -> Settings:
    """The lab's knobs from the environment, with the fields an experiment fixes (its network, its paths...) replaced:
    no option goes back through an environment string to be parsed again."""
    return dataclasses.replace(Settings.from_env(dict(os.environ)), **fixed)


def paths_option(parser: argparse.ArgumentParser, aggregator_only: bool = True, help: str = "") -> None:
    parser.add_argument("--paths", default=catalogue.DEFAULT, help=help or "the aggregator's paths")
    parser.set_defaults(aggregator_only=aggregator_only)


def path_names(options: argparse.Namespace, error: Callable[[str], None]) -> List[str]:
    """--paths as path names, or the parser's error naming what is wrong."""
    try:
        names = [path.name for path in catalogue.parse(options.paths)]
    except ValueError as problem:
        error(str(problem))
        return []
    if getattr(options, "aggregator_only", False) and any(
        catalogue.ALL[name].target != catalogue.AGGREGATOR for name in names
    ):
        error("--paths: only the aggregator's paths (%s)" % catalogue.DEFAULT)
    return names


def whole_numbers(text: str, option: str, error: Callable[[str], None]) -> List[int]:
    """A space-separated list of whole numbers of at least 1, in order, each once."""
    values = text.split()
    if not values or not all(value.isdigit() and int(value) >= 1 for value in values):
        error('%s must be whole numbers of at least 1, space-separated, e.g. "100 1000" (got %r)' % (option, text))
    return list(dict.fromkeys(int(value) for value in values if value.isdigit()))


class Experiment:
    """A command of the lab. A subclass sets name (its run.sh --<name>), about (its line in --help), document (its
    JSON, named as lab.results.results.DOCUMENTS does) and summary (its template under loadtest/report/), adds its
    options in add_options(), checks them in checked(), and measures in measure(), which returns its document's
    record; checks(record) says which promises it broke."""

    name = ""
    about = ""
    document = ""
    summary = ""
    # The results folder's name before its time, e.g. "faults-".
    prefix = ""

    def __init__(self, options: argparse.Namespace) -> None:
        self.options = options

    @classmethod
    def parser(cls) -> argparse.ArgumentParser:
        parser = argparse.ArgumentParser(
            prog="loadtest/run.sh --" + cls.name,
            description=cls.about + ". The lab's knobs (ports, JAVA_OPTS, AGGREGATOR_ARGS, REST_SERVER, REST_CLIENT, "
            "REPLICAS, HEALTH_TIMEOUT, LAB_SKIP_BUILD, RESULTS_DIR) hold here too.",
            formatter_class=argparse.ArgumentDefaultsHelpFormatter,
        )
        cls.add_options(parser)
        return parser

    @classmethod
    def add_options(cls, parser: argparse.ArgumentParser) -> None:
        """The experiment's own options."""

    @classmethod
    def checked(cls, options: argparse.Namespace, error: Callable[[str], None]) -> None:
        """Checks (and completes) the options before anything starts; error(message) refuses them."""

    @classmethod
    def parse(cls, argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
        """The options, checked and completed; argparse's usage error (exit 2) when they cannot measure."""
        parser = cls.parser()
        options = parser.parse_args(argv)
        cls.checked(options, parser.error)
        return options

    @classmethod
    def main(cls, argv: Optional[Sequence[str]] = None) -> int:
        options = cls.parse(argv)
        # A TERM or Ctrl-C stops every process it started on the way out.
        raise_on_term()
        return exit_status(lambda: cls(options).run())

    def run(self) -> int:
        """The folder, the measuring, then the document, the summary and the exit status."""
        out = folder(os.environ.get("RESULTS_DIR") or getattr(self.options, "out", None), self.prefix, self.document)
        record = dict(self.measure(out), finished_at=results.now())
        return self.write(out, record)

    def measure(self, out: str) -> Dict:
        raise NotImplementedError

    def checks(self, record: Dict) -> Dict[str, List[str]]:
        """Each promise of the experiment and how the run missed it (an empty list: met)."""
        return {}

    def facts(self, record: Dict) -> Dict:
        """What its summary's template needs beside the record (tables, helpers)."""
        return {}

    def write(self, out: str, record: Dict) -> int:
        """The document, with each promise and whether it held; its summary; 0 when every promise held."""
        found = self.checks(record)
        if found:
            record["checks"] = {name: {"passed": not missed, "failures": missed} for name, missed in found.items()}
            record["passed"] = not any(found.values())
        results.write_json(out, record, name=self.document)
        text = report.fill(self.summary, record=record, **self.facts(record))
        with open(os.path.join(out, os.path.splitext(self.document)[0] + ".md"), "w") as handle:
            handle.write(text)
        print()
        print(text)
        print("[lab] results: %s" % out)
        missed = [failure for failures in found.values() for failure in failures]
        if missed:
            print("[lab] ERROR: the %s run broke a promise:\n  %s" % (self.name, "\n  ".join(missed)), file=sys.stderr)
            return 1
        return 0
