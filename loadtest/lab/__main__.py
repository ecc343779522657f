"""The lab's commands, called by loadtest/run.sh (which starts and stops the services).

    python3 -m lab services                   the services PATHS needs, one per line (checks every knob)
    python3 -m lab setting NAME               one resolved knob, e.g. ab_timeout_s
    python3 -m lab ports VARIABLE=PORT...     fails, naming them, when ports are already taken
    python3 -m lab wait-healthy [--logs DIR] SECONDS NAME=PID=URL...
    python3 -m lab measure DIR --java J --java-opts O --repo R [--aggregator-args A] [--metrics NAME=URL]...
                           [--prometheus-url URL] NAME=PID[=URL]...
    python3 -m lab floor DIR --script S --jar J [--java J] [--java-opts O]
                                              runs the transport floor for DIR's measured paths (services stopped)
                                              and adds it to DIR/results.json and DIR/summary.md
    python3 -m lab report DIR                 writes DIR/report.html from DIR/results.json
    python3 -m lab check DIR                  checks DIR/results.json as CI does
"""

import argparse
import datetime
import os
import signal
import subprocess
import sys

from . import bench, check_results, environment, floor, http_check, paths, report, results
from .settings import Settings, SettingsError


def main(argv=None) -> int:
    # A plain TERM (the lab's cleanup, or a CI timeout) must end the run like Ctrl-C does: as an exception,
    # so that the ab under way is killed too instead of being left running.
    signal.signal(signal.SIGTERM, _raise_exit)
    parser = argparse.ArgumentParser(prog="python3 -m lab")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("services")
    commands.add_parser("setting").add_argument("name", choices=["ab_timeout_s", "replicas"])
    ports = commands.add_parser("ports")
    ports.add_argument("ports", nargs="+", metavar="VARIABLE=PORT")
    healthy = commands.add_parser("wait-healthy")
    healthy.add_argument("--logs", help="folder of the services' logs, to show the failing one's end")
    healthy.add_argument("timeout", type=float)
    healthy.add_argument("services", nargs="+", metavar="NAME=PID=URL")
    measure = commands.add_parser("measure")
    measure.add_argument("results_dir")
    measure.add_argument("--java", default="java")
    measure.add_argument("--java-opts", default="")
    measure.add_argument("--aggregator-args", default="")
    measure.add_argument("--repo", default=".")
    measure.add_argument("--metrics", action="append", default=[], metavar="NAME=URL[,URL...]",
                         help="a service's /actuator/prometheus URL (one per replica), read around each measured run")
    measure.add_argument("--prometheus-url", default=None, help="the Prometheus run beside the lab, if any")
    measure.add_argument("services", nargs="+", metavar="NAME=PID[,PID...][=URL]",
                         help="a service the lab started: the pids of its replicas, and its base URL if any")
    floor_run = commands.add_parser("floor")
    floor_run.add_argument("results_dir")
    floor_run.add_argument("--script", required=True, help="transport-floor/run-floor.sh")
    floor_run.add_argument("--jar", required=True, help="the transport-floor jar")
    floor_run.add_argument("--java", default="java")
    floor_run.add_argument("--java-opts", default="", help="the lab's JAVA_OPTS, as the services had them")
    for name in ("report", "check"):
        commands.add_parser(name).add_argument("results_dir")
    args = parser.parse_args(argv)
    try:
        return COMMANDS[args.command](args)
    except SettingsError as error:
        print("[lab] ERROR: %s" % error, file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        # run.sh says so and cleans up; a traceback would only hide its message.
        return 130


def services_command(_args) -> int:
    settings = Settings.from_env()
    for name in paths.services_needed(paths.ALL[p] for p in settings.paths):
        print(name)
    return 0


def setting_command(args) -> int:
    print(getattr(Settings.from_env(), args.name))
    return 0


def ports_command(args) -> int:
    taken = []
    for entry in args.ports:
        variable, port = entry.split("=", 1)
        if http_check.port_taken(int(port)):
            taken.append((variable, int(port)))
    for variable, port in taken:
        print("[lab] ERROR: port %d (%s) is already in use on 127.0.0.1.%s" % (port, variable, _holder(port)),
              file=sys.stderr)
    if taken:
        # A replica's port is named VARIABLE+offset: the knob to move is VARIABLE itself.
        moved = {}
        for variable, port in taken:
            base, _, offset = variable.partition("+")
            moved.setdefault(base, port - int(offset or 0) + 10000)
        print("[lab] Stop what holds it, or give the lab other ports, e.g. %s loadtest/run.sh"
              % " ".join("%s=%d" % item for item in moved.items()), file=sys.stderr)
    return 1 if taken else 0


def wait_healthy_command(args) -> int:
    services = []
    for entry in args.services:
        name, pid, url = entry.split("=", 2)
        services.append((name, int(pid), url))
    problem = http_check.wait_healthy(services, args.timeout)
    if not problem:
        return 0
    print("[lab] ERROR: %s" % problem.message, file=sys.stderr)
    if args.logs:
        log_file = os.path.join(args.logs, problem.service + ".log")
        print("[lab] the end of %s:" % log_file, file=sys.stderr)
        print(_tail(log_file, 40), file=sys.stderr)
    return 1


def measure_command(args) -> int:
    settings = Settings.from_env()
    metrics_urls = {name: urls.split(",") for name, urls in (entry.split("=", 1) for entry in args.metrics)}
    services = [_service(entry, metrics_urls) for entry in args.services]
    started = _now()
    env = environment.describe(args.repo, args.java, args.java_opts)
    run_results = {
        "environment": env,
        "settings": dict(settings.as_dict(), java_opts=args.java_opts, aggregator_args=args.aggregator_args,
                         ab_command="ab -n %d -c <concurrency> -s %d -q -r -e <csv> <url>"
                                    % (settings.requests, settings.ab_timeout_s),
                         keep_alive=False,
                         endpoints={s.name: s.base_url for s in services if s.base_url},
                         metrics_endpoints={s.name: ",".join(s.metrics_urls) for s in services if s.metrics_urls},
                         prometheus_url=args.prometheus_url),
        "started_at": started,
        "finished_at": None,
        "runs": [],
    }
    os.makedirs(os.path.join(args.results_dir, "raw"), exist_ok=True)

    wrong = _verify(settings, services)
    if wrong:
        print("[lab] ERROR: a path answers wrongly, so the lab measures nothing:", file=sys.stderr)
        for problem in wrong:
            print("  " + problem, file=sys.stderr)
        return 1

    combos = settings.combinations()
    for index, (name, n, concurrency) in enumerate(combos, 1):
        print("[lab] run %d/%d: %s n=%d concurrency=%d" % (index, len(combos), name, n, concurrency), flush=True)
        run = bench.measure(paths.ALL[name], n, concurrency, settings, services,
                            os.path.join(args.results_dir, "raw"), log=_log)
        run_results["runs"].append(run)
        _print_outcome(run)
        # Rewritten after every run: an interrupted lab still leaves the runs it finished.
        results.write_json(args.results_dir, run_results)
    run_results["finished_at"] = _now()
    results.write_json(args.results_dir, run_results)
    results.write_summary(args.results_dir, run_results)
    print()
    print(results.summary_table(run_results))
    side_table = results.server_side_table(run_results)
    if side_table:
        print("Server side (the services' own metrics over each measured run; ≤: an upper bound):")
        print(side_table)
    troubled = [run for run in run_results["runs"] if results.problems(run)]
    if troubled:
        print("[lab] ERROR: %d of %d runs had failures (see summary.md); their figures are not comparable."
              % (len(troubled), len(combos)), file=sys.stderr)
        return 1
    return 0


def floor_command(args) -> int:
    data = results.read_json(args.results_dir)
    try:
        options = floor.aggregator_options(data["settings"].get("aggregator_args") or "")
        _check_in_flight(os.path.join(args.results_dir, "logs", paths.AGGREGATOR + ".log"), options)
    except floor.FloorError as error:
        print("[lab] ERROR: no floor: %s" % error, file=sys.stderr)
        return 1
    windows, _ = floor.plan(data["settings"])
    if not windows:
        print("[lab] floor: no measured path has a bare transport to compare with (rest/square is a baseline, "
              "and n=0 makes no downstream call)", flush=True)
    started = _now()
    records = floor.measure(args.results_dir, data, args.script, args.jar, args.java, args.java_opts, os.environ,
                            log=lambda line: print(line, flush=True))
    floor.attach(data, records, options, extra={
        "started_at": started, "finished_at": _now(), "java_opts": args.java_opts, "jar": args.jar,
        "time_limit_s": floor.time_limit_s(os.environ)})
    results.write_json(args.results_dir, data)
    results.write_summary(args.results_dir, data)
    table = results.floor_table(data)
    if table:
        print()
        print("Transport floor (each path's downstream calls/s against its bare transport's; goal: at least %d %%):"
              % round(floor.GOAL * 100))
        print(table)
    failed = [record for record in records if "error" in record]
    if failed:
        print("[lab] ERROR: %d of %d floor runs failed, so their paths have no fraction of floor (see summary.md)."
              % (len(failed), len(records)), file=sys.stderr)
        return 1
    return 0


def _check_in_flight(log_file: str, options) -> None:
    """The in-flight the windows are made of must be the one the aggregator said it uses, when it said so."""
    try:
        with open(log_file, errors="replace") as handle:
            logged = floor.logged_in_flight(handle.read())
    except OSError:
        return
    if logged is not None and logged != options["in_flight"]:
        raise floor.FloorError(
            "the aggregator's log says it kept %d calls in flight per request, but its arguments (AGGREGATOR_ARGS) "
            "give %d; set aggregator.in-flight through AGGREGATOR_ARGS only, so that the lab knows the window"
            % (logged, options["in_flight"]))


def report_command(args) -> int:
    try:
        target = report.write(args.results_dir)
    except report.ReportError as error:
        print("[lab] ERROR: no report.html: %s" % error, file=sys.stderr)
        return 1
    print("[lab] report: %s" % target)
    return 0


def check_command(args) -> int:
    return check_results.main([args.results_dir])


COMMANDS = {
    "services": services_command,
    "setting": setting_command,
    "ports": ports_command,
    "wait-healthy": wait_healthy_command,
    "measure": measure_command,
    "floor": floor_command,
    "report": report_command,
    "check": check_command,
}


def _verify(settings, services):
    """Checks every path at every n against the exact expected body before anything is measured."""
    base_urls = {s.name: s.base_url for s in services if s.base_url}
    wrong = []
    for name in settings.paths:
        path = paths.ALL[name]
        for n in settings.n:
            print("[lab] checking %s n=%d answers correctly" % (name, n), flush=True)
            problem = http_check.answer_mismatch(path, path.url(base_urls, n), n, settings.ab_timeout_s)
            if problem:
                wrong.append(problem)
    return wrong


def _service(entry: str, metrics_urls) -> bench.Service:
    name, pids, *url = entry.split("=", 2)
    return bench.Service(name, [int(pid) for pid in pids.split(",")], url[0] if url else None,
                         metrics_urls.get(name, []))


def _print_outcome(run) -> None:
    found = results.problems(run)
    if "error" in run:
        _log("ERROR: " + run["error"])
        return
    latency = run["latency_ms"]
    _log("%.2f req/s, p50 %.1f ms, p90 %.1f ms, failed %d%s" % (
        run["rps"], latency["p50"] or 0, latency["p90"] or 0, run["failed"],
        "  <- " + "; ".join(found) if found else ""))
    side = run.get("server_side") or {}
    if "error" in side:
        _log("warning: " + side["error"])
    elif side:
        _log("server side: %s square calls served, %s downstream calls made"
             % (side.get("square_calls"), side.get("downstream_calls", "-")))


def _holder(port: int) -> str:
    """Which process holds a port, when ss can tell."""
    try:
        out = subprocess.run(["ss", "-Hltnp", "sport = :%d" % port], capture_output=True, text=True,
                             timeout=5).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return " Held by: %s" % out.split("users:", 1)[-1] if "users:" in out else ""


def _tail(file_name: str, lines: int) -> str:
    try:
        with open(file_name, errors="replace") as handle:
            return "".join(handle.readlines()[-lines:]).rstrip()
    except OSError as error:
        return "(cannot read it: %s)" % error


def _log(message: str) -> None:
    print("  " + message.strip(), flush=True)


def _now() -> str:
    return datetime.datetime.now().astimezone().isoformat(timespec="seconds")


def _raise_exit(signum, _frame):
    raise SystemExit(128 + signum)


if __name__ == "__main__":
    sys.exit(main())
