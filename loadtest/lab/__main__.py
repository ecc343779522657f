"""The lab's commands, called by loadtest/run.sh.

python3 -m lab run          the whole lab, with the knobs of the environment (lab.run)
python3 -m lab report DIR   (re)writes DIR/summary.md and DIR/report.html from DIR/results.json
python3 -m lab check DIR    checks DIR/results.json as CI does (--round-trips: also on a slow network)
python3 -m lab knobs        lists the knobs and their defaults (--markdown: as loadtest/README.md's table)
python3 -m lab faults ...   network faults under load (lab.faults; --help lists its options)
python3 -m lab clients ...  many clients on each path, measured (lab.many_clients; --help lists its options)
python3 -m lab article DIR  the article's own code and ours side by side, alternating (lab.article; --help)
python3 -m lab profile ...  CPU flame graphs and CPU per call by layer of the gRPC paths (lab.profile; --help)
"""

import argparse
import os
import sys

from . import article, check_results, faults, many_clients, profile, report, results, run, settings
from .errors import LabError, exit_status


def main(argv=None) -> int:
    given = sys.argv[1:] if argv is None else argv
    if given[:1] == ["faults"]:
        # Its own options, which argparse's subcommands would not pass on whole.
        return faults.main(given[1:])
    if given[:1] == ["clients"]:
        return many_clients.main(given[1:])
    if given[:1] == ["article"]:
        return article.main(given[1:])
    if given[:1] == ["profile"]:
        return profile.main(given[1:])
    parser = argparse.ArgumentParser(prog="python3 -m lab")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("run")
    commands.add_parser("knobs").add_argument(
        "--markdown", action="store_true", help="as the table in loadtest/README.md"
    )
    # Listed for --help only: main hands "faults" and "clients" and their options to their modules before argparse
    # sees them.
    commands.add_parser("faults", help="network faults under load; python3 -m lab faults --help")
    commands.add_parser("clients", help="many clients on each path, measured; python3 -m lab clients --help")
    commands.add_parser("article", help="the article's code and ours side by side; python3 -m lab article --help")
    commands.add_parser("profile", help="flame graphs and CPU per call by layer; python3 -m lab profile --help")
    for name in ("report", "check"):
        commands.add_parser(name).add_argument("results_dir")
    commands.choices["check"].add_argument(
        "--round-trips",
        action="store_true",
        help="on each network with a round trip, grpc/stream's p50 below rest/unary's",
    )
    args = parser.parse_args(given)
    return exit_status(lambda: _command(args))


def _command(args: argparse.Namespace) -> int:
    if args.command == "run":
        return run.main()
    if args.command == "knobs":
        print(settings.markdown() if args.markdown else settings.usage())
        return 0
    if args.command == "check":
        return check_results.main([args.results_dir] + (["--round-trips"] if args.round_trips else []))
    if not os.path.isfile(os.path.join(args.results_dir, results.RESULTS_JSON)):
        raise LabError("%s has no results.json to report on" % args.results_dir)
    # Both from results.json alone, so that an older run's folder reads with today's verdict and charts.
    print("[lab] summary: %s" % report.write_summary(args.results_dir, results.read_json(args.results_dir)))
    print("[lab] report: %s" % report.write(args.results_dir, fetch=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
