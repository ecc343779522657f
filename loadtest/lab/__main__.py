"""The lab's commands, called by loadtest/run.sh.

python3 -m lab run              the whole lab, with the knobs of the environment (lab.experiments.run)
python3 -m lab report DIR       (re)writes DIR/summary.md, report.html and the exports from DIR/results.json; with
                                EXPECT, judges those gates against it (exit 99 when one is missed)
python3 -m lab compare OLD NEW  compares two results folders path by path, writes NEW/comparison.md and .json
python3 -m lab check DIR        checks DIR/results.json as CI does (--round-trips: also on a slow network)
python3 -m lab knobs            lists the knobs and their defaults (--markdown: as loadtest/README.md's table)
python3 -m lab commands         lists the experiments below, one line each
python3 -m lab <experiment> ... faults, clients, overload, design, article, profile (lab.experiments.COMMANDS);
                                --help lists each one's options
"""

import argparse
import os
import re
import sys

from .core import settings
from .core.errors import LabError, exit_status
from .core.gates import GATES_FAILED
from .experiments import COMMANDS, run
from .host import tools
from .results import check_results, compare, exports, gates, report, results


def main(argv=None) -> int:
    given = sys.argv[1:] if argv is None else argv
    if given[:1] and given[0] in COMMANDS:
        # Its own options, which argparse's subcommands would not pass on whole.
        return COMMANDS[given[0]].main(given[1:])
    parser = argparse.ArgumentParser(prog="python3 -m lab")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("run")
    commands.add_parser("commands", help="the experiments, one line each")
    commands.add_parser("knobs").add_argument(
        "--markdown", action="store_true", help="as the table in loadtest/README.md"
    )
    # Listed for --help only: main hands an experiment and its options to it before argparse sees them.
    for name, experiment in COMMANDS.items():
        commands.add_parser(name, help="%s; python3 -m lab %s --help" % (experiment.about, name))
    for name in ("report", "check"):
        commands.add_parser(name).add_argument("results_dir")
    comparing = commands.add_parser("compare", help="two results folders, path by path, with a test of each change")
    comparing.add_argument("old")
    comparing.add_argument("new")
    commands.choices["check"].add_argument(
        "--round-trips",
        action="store_true",
        help="on each network with a round trip, grpc/stream's p50 below rest/unary's",
    )
    commands.choices["check"].add_argument(
        "--knee-bracketed", action="store_true", help="each knee search found a rate that held and one that broke"
    )
    args = parser.parse_args(given)
    return exit_status(lambda: _command(args))


def _command(args: argparse.Namespace) -> int:
    if args.command == "run":
        return run.main()
    if args.command == "commands":
        print(
            "\n".join(
                "       loadtest/run.sh --%-9s %s" % (name, re.split("[:;]", e.about)[0])
                for name, e in COMMANDS.items()
            )
        )
        return 0
    if args.command == "knobs":
        print(settings.markdown() if args.markdown else settings.usage())
        return 0
    if args.command == "compare":
        return _compare(args.old, args.new)
    if args.command == "check":
        flags = [
            flag for flag, on in (("--round-trips", args.round_trips), ("--knee-bracketed", args.knee_bracketed)) if on
        ]
        return check_results.main([args.results_dir] + flags)
    if not os.path.isfile(os.path.join(args.results_dir, results.RESULTS_JSON)):
        raise LabError("%s has no results.json to report on" % args.results_dir)
    # Both from results.json alone, so that an older run's folder reads with today's verdict and charts.
    data = results.read_json(args.results_dir)
    expect = os.environ.get("EXPECT", "").strip()
    if expect:
        # Gates given now are judged against the figures the folder holds, in place of its run's own.
        baseline = os.environ.get("BASELINE", "").strip()
        gates.record(data, expect, results.read_json(baseline) if baseline else None)
        results.write_json(args.results_dir, data)
    print("[lab] summary: %s" % report.write_summary(args.results_dir, data))
    print("[lab] exports: %s" % " ".join(exports.write(args.results_dir, data)))
    tools.ensure_scripts(fetch=True)
    print("[lab] report: %s" % report.write(args.results_dir))
    missed = gates.failed(data) if expect else []
    for gate in missed:
        print("[lab] GATE MISSED: %s" % gate["gate"], file=sys.stderr)
    return GATES_FAILED if missed else 0


def _compare(old_dir: str, new_dir: str) -> int:
    """Compares two folders' results.json, writes comparison.json and .md into the newer, and prints the Markdown."""
    old, new = (results.read_json(folder) for folder in (old_dir, new_dir))
    names = (os.path.basename(os.path.normpath(old_dir)), os.path.basename(os.path.normpath(new_dir)))
    written = report.write_comparison(new_dir, compare.compare(old, new, names))
    with open(written, encoding="utf-8") as text:
        print(text.read(), end="")
    print("[lab] comparison: %s" % written)
    return 0


if __name__ == "__main__":
    sys.exit(main())
