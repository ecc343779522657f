"""The whole lab, in order: build the jars when missing or stale, make sure ApacheBench and ss are there, start the
square services on loopback (and Toxiproxy, for a NETWORK other than loopback), then for each network an aggregator:
check every path's answer with every payload shape, measure each combination (bench), stop it; stop the services,
run the bare transports' floor on the machine they no longer share, and write results.json, summary.md and
report.html.

Every process it starts is a child of this one (lab.processes) and is stopped on the way out, whether the lab
finished, failed, or was stopped with Ctrl-C or TERM.
"""

import dataclasses
import datetime
import os
import shutil
import signal
import sys
import urllib.parse
import urllib.request
from typing import Any, Dict, List, Optional, Tuple, Union

from ..core import catalogue, knee, records, repeats, windows
from ..core.errors import LabError, ReportError, ToolMissing
from ..core.gates import GATES_FAILED
from ..core.paths import LAB_DIR, REPO
from ..core.settings import Settings
from ..host import environment, hosts, placement, tools
from ..host.processes import Processes, raise_on_term, wait_until
from ..load import http_check
from ..measure import bench, floor, mix, progress
from ..results import check_results, compare, exports, floors, gates, report, results, view
from ..stage import deadlines, services, stacks, stage, target, target_stage, tls

PROMETHEUS_SCRIPT = os.path.join(REPO, "monitoring", "run-prometheus.sh")


def main() -> int:
    raise_on_term()
    settings = Settings.from_env()
    # Before anything starts: every child the lab starts from here on runs on its side's CPUs (CPUS).
    placement.use(placement.plan(settings.cpus))
    results_dir = os.path.abspath(
        settings.results_dir or os.path.join(LAB_DIR, "results", datetime.datetime.now().strftime("%Y%m%d-%H%M%S"))
    )
    if os.path.exists(os.path.join(results_dir, results.RESULTS_JSON)):
        raise LabError("%s already holds results: choose another RESULTS_DIR" % results_dir)
    if settings.target:
        # It starts no JVM: the lab's image (loadtest/Dockerfile) has none.
        return measure_target(settings, results_dir, shutil.which("java") or "no java (TARGET starts none)")
    java = tools.java()
    # A JDK or server the machine cannot serve stops the lab here, before it builds or starts anything.
    lab_stacks = stacks.resolve(settings, java)
    modules = catalogue.services_needed(catalogue.ALL[p] for p in settings.paths)
    # Each stack's services from its Spring generation's modules, and the floor's jar.
    built = list(dict.fromkeys(stack.module(module) for stack in lab_stacks for module in modules))
    jars = tools.ensure_jars(REPO, built + ([services.FLOOR] if settings.floor else []), settings.skip_build)
    tools.ensure_command("ab", "apache2-utils", tools.AB_MISSING)
    tools.ensure_command("ss", "iproute2", tools.SS_MISSING)
    toxiproxy = tools.ensure_toxiproxy() if settings.proxied else None
    instances = services.layout(settings, modules)
    services.check_ports(instances, settings)
    os.makedirs(os.path.join(results_dir, "logs"), exist_ok=True)

    # The floor runs one window per measured transport (fewer when two paths share one); enough for an estimate.
    floor_windows = [
        p for mode in settings.tls for p in settings.paths if settings.floor and catalogue.ALL[p].transport is not None
    ]
    lab_progress = progress.Progress(
        progress.plan(settings, [stack.label for stack in lab_stacks], floor_windows),
        log=lambda line: print(line, flush=True),
    )
    encrypted = any(stack.tls != catalogue.PLAINTEXT for stack in lab_stacks)
    apart = any(catalogue.PROFILES[name].apart for name in settings.network)
    try:
        with Processes() as processes, lab_progress, hosts.joined(apart) as squares_host, tls.certificates(
            REPO, encrypted, [squares_host.squares_address] if squares_host else []
        ) as certificates:
            lab_stage = stage.Stage(processes, settings, instances, jars, results_dir)
            lab_stage.certificates = certificates
            lab_stage.hosts = squares_host
            if toxiproxy:
                lab_stage.start_proxy(toxiproxy)
            prometheus_url = start_prometheus(processes, instances, settings, results_dir)
            status = measure(
                results_dir, settings, lab_stacks, instances, lab_stage, java, prometheus_url, lab_progress
            )
            processes.stop_all()
            if settings.floor:
                floor_status = run_floor(
                    results_dir,
                    floor.Jvm(jars[services.FLOOR], java, settings.java_opts),
                    settings,
                    processes,
                    lab_progress,
                    floor.Encryption(certificates, settings.tls_provider),
                )
                status = status or floor_status
    except (LabError, KeyboardInterrupt, SystemExit) as error:
        # Every process it started is stopped by now; what it measured before is kept and reported.
        return finish(results_dir, settings, stopped(results_dir, error, lab_progress))
    return finish(results_dir, settings, status, checked=True)


def stopped(results_dir: str, error: BaseException, lab_progress: progress.Progress) -> int:
    """Records why the run stopped before its end in results.json, first among its failures, and returns the lab's
    exit status; with nothing measured yet (no results.json), the error as it is."""
    if not os.path.exists(os.path.join(results_dir, results.RESULTS_JSON)):
        raise error
    status, why = stop_reason(error)
    where = lab_progress.where()
    what = "%s%s; what it measured before is kept, and nothing after it ran" % (why, " " + where if where else "")
    print("[lab] ERROR: %s" % what, file=sys.stderr)
    data = results.read_json(results_dir)
    results.add_failure(data, what)
    results.write_json(results_dir, data)
    return status


def stop_reason(error: BaseException) -> Tuple[int, str]:
    """The exit status and the words for what stopped a run: a signal (TERM arrives as SystemExit(128 + TERM)),
    Ctrl-C, or the lab's own error."""
    if isinstance(error, KeyboardInterrupt):
        return 130, "the lab was stopped with Ctrl-C (SIGINT)"
    if isinstance(error, SystemExit):
        code = error.code if isinstance(error.code, int) else 1
        name = signal.Signals(code - 128).name if 128 < code < 128 + 64 else "exit %d" % code
        return code, "the lab was stopped by %s" % name
    return 1, "the lab stopped: %s" % error


# What results.json says of the aggregator's arguments with TARGET: the lab passed it none.
TARGET_OWN = "the aggregator's own (TARGET: the lab started it with none)"


def finish(results_dir: str, settings: Settings, status: int, checked: bool = False) -> int:
    """Checks a run that went to its end as CI does (what the check finds is the run's failure, said first), writes
    summary.md and report.html from results.json whatever happened, and says where the results are; the lab's exit
    status."""
    data = results.read_json(results_dir)
    if checked:
        found = check_results.problems(data)
        if found:
            results.add_failure(data, "its check found:\n  " + "\n  ".join(found))
    baseline = results.read_json(settings.baseline) if settings.baseline else None
    if settings.expect:
        gates.record(data, "; ".join(settings.expect), baseline)
    breaches = results.write_json(results_dir, data)
    if breaches:
        print("[lab] ERROR: %s" % results.failures(data)[0], file=sys.stderr)
    print("[lab] summary: %s" % report.write_summary(results_dir, data))
    print("[lab] exports: %s" % " ".join(exports.write(results_dir, data)))
    if baseline is not None:
        names = (os.path.basename(settings.baseline), os.path.basename(results_dir))
        print("[lab] comparison: %s" % report.write_comparison(results_dir, compare.compare(baseline, data, names)))
    try:
        # The Maven build (LAB_SKIP_BUILD=1) has fetched the report's scripts already; a user's run may fetch them.
        tools.ensure_scripts(fetch=not settings.skip_build)
        print("[lab] report: %s" % report.write(results_dir))
    except (ReportError, ToolMissing) as error:
        print("[lab] ERROR: no report.html: %s" % error, file=sys.stderr)
        print("[lab] once that is fixed: loadtest/run.sh --report %s" % results_dir, file=sys.stderr)
        status = status or 1
    for failure in results.failures(data):
        print("[lab] FAILED: %s" % failure, file=sys.stderr)
    missed = gates.failed(data)
    for gate in missed:
        print("[lab] GATE MISSED: %s" % gate["gate"], file=sys.stderr)
    print(
        "[lab] results: %s (summary.md, results.json, report.html, figures.csv, figures.om, raw/%s)"
        % (results_dir, "" if settings.target else ", logs/" + (", floor/" if settings.floor else ""))
    )
    return status or (1 if results.failures(data) else GATES_FAILED if missed else 0)


def measure_target(settings: Settings, results_dir: str, java: str) -> int:
    """TARGET: the services someone else started (lab.target), found, checked and measured where they run; no floor,
    which is this machine's bare transports."""
    tools.ensure_command("ab", "apache2-utils", tools.AB_MISSING)
    print("[lab] TARGET %s: measuring services the lab did not start" % settings.target, flush=True)
    # A Prometheus that does not answer, or scrapes none of the services, stops the lab here, before any load.
    prometheus = target.Prometheus(settings.target_prometheus) if settings.target_prometheus else None
    remotes = target.discover(
        settings.target,
        target.given_actuators(settings.target_actuators),
        settings.paths,
        wait_s=settings.health_timeout_s,
        prometheus=prometheus,
    )
    for remote in remotes:
        for where in remote.where:
            print(
                "[lab]   %s at %s: host %s%s, %s, %s cores"
                % (
                    remote.module,
                    where["actuator"],
                    where.get("host", "?"),
                    " pod " + where["pod"] if where.get("pod") else "",
                    where.get("java", "JDK ?"),
                    where.get("cores", "?"),
                ),
                flush=True,
            )
    stack = target_stage.stack_of(remotes, settings.paths)
    print(
        "[lab] CPU and memory from %s"
        % target.HOW_READ[target.PROMETHEUS if settings.target_prometheus else target.ACTUATOR],
        flush=True,
    )
    os.makedirs(results_dir, exist_ok=True)
    lab_progress = progress.Progress(
        progress.plan(settings, [stack.label], []), log=lambda line: print(line, flush=True)
    )
    try:
        with lab_progress:
            status = measure(
                results_dir,
                settings,
                [stack],
                [],
                target_stage.TargetStage(remotes, stack, prometheus),
                java,
                None,
                lab_progress,
                target_stage.record(settings.target, remotes, settings.target_prometheus),
            )
    except (LabError, KeyboardInterrupt, SystemExit) as error:
        return finish(results_dir, settings, stopped(results_dir, error, lab_progress))
    return finish(results_dir, settings, status, checked=True)


def start_prometheus(processes: Processes, instances: List[services.Instance], settings: Settings, results_dir: str):
    """PROMETHEUS=1: a real Prometheus beside the run, scraping the lab's ports; its URL, or None."""
    if not settings.prometheus:
        return None
    first: Dict[str, str] = {}
    for instance in instances:
        first.setdefault(instance.module, instance.actuator.split("/")[2])
    log_path = os.path.join(results_dir, "prometheus.log")
    print("[lab] starting Prometheus on 127.0.0.1:%d (log: %s)" % (settings.prometheus_port, log_path), flush=True)
    env = dict(
        os.environ,
        AGGREGATOR_ADDRESS=first.get(catalogue.AGGREGATOR, ""),
        SQUARE_REST_ADDRESS=first.get(catalogue.SQUARE_REST, ""),
        SQUARE_GRPC_ACTUATOR_ADDRESS=first.get(catalogue.SQUARE_GRPC, ""),
    )
    child = processes.start(
        ["bash", PROMETHEUS_SCRIPT, "--port", str(settings.prometheus_port), "--listen-address", "127.0.0.1"],
        log_path=log_path,
        env=env,
    )
    url = "http://127.0.0.1:%d" % settings.prometheus_port
    not_started = LabError("Prometheus did not start (see %s; PROMETHEUS=0 runs the lab without it)" % log_path)

    def ready() -> bool:
        if _ready(url + "/-/ready"):
            return True
        if child.poll() is not None:
            raise not_started
        return False

    if not wait_until(ready, 60, 0.5):
        raise not_started
    print("[lab] Prometheus: %s (targets: %s/classic/targets); e.g. requests per second per transport:" % (url, url))
    print(
        "[lab]   %s/classic/graph?g0.expr=%s"
        % (url, urllib.parse.quote("sum by (transport) (rate(aggregator_fanout_seconds_count[1m]))")),
        flush=True,
    )
    return url


def _ready(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


def measure(
    results_dir: str,
    settings: Settings,
    lab_stacks: List[stacks.Stack],
    instances: List[services.Instance],
    lab_stage: Union[stage.Stage, target_stage.TargetStage],
    java: str,
    prometheus_url,
    lab_progress: progress.Progress,
    target_record: Optional[Dict] = None,
) -> int:
    """Per stack (REST_SERVER, JAVA_HOMES), with the square services started for it, and per network (NETWORK), with
    an aggregator started for it: checks every answer, then measures every combination of path, payload shape, n and
    concurrency (or rate), interleaved; writes results.json and summary.md."""
    per_network = {name: deadlines.for_network(catalogue.PROFILES[name], settings) for name in settings.network}
    run_results: Dict[str, Any] = {
        "environment": dict(
            environment.describe(REPO, java, settings.java_opts), placement=placement.current().record()
        ),
        "settings": dict(
            settings.as_dict(),
            aggregator=None,
            aggregator_args=" ".join(services.aggregator_arguments(settings)),
            **load_command(settings, sorted({d.client_timeout_s for d in per_network.values()})),
            endpoints={i.module: i.base_url for i in _first_instances(instances) if i.base_url},
            metrics_endpoints={
                module: ",".join(i.actuator + "/prometheus" for i in instances if i.module == module)
                for module in dict.fromkeys(i.module for i in instances)
            },
            target_details=target_record,
            prometheus_url=prometheus_url,
            stacks=[stack.as_dict() for stack in lab_stacks],
            networks={},
        ),
        "started_at": results.now(),
        "finished_at": None,
        "runs": [],
    }
    if target_record:
        # The services' JVM options are whatever they were started with; the lab's JAVA_OPTS did not reach them.
        run_results["environment"]["java_opts"] = "the services' own (TARGET: the lab started none)"
        run_results["environment"]["one_box"] = False
        run_results["settings"]["aggregator_args"] = TARGET_OWN
        # Where the services it did not start answer, as lab.stage.target found them.
        run_results["settings"]["endpoints"] = target_record.pop("endpoints")
        run_results["settings"]["metrics_endpoints"] = target_record.pop("metrics_endpoints")
    if lab_stage.toxiproxy:
        run_results["settings"]["toxiproxy"] = {
            "version": tools.TOXIPROXY_STAMP,
            "api_port": settings.toxiproxy_port,
            "proxies": [
                {"name": r.name, "listen": "127.0.0.1:%d" % r.listen_port, "upstream": r.upstream}
                for r in lab_stage.routes
            ],
        }
    if settings.open_loop:
        run_results["environment"]["load_generator"] = "Vegeta %s" % tools.VEGETA_VERSION
    raw_dir = os.path.join(results_dir, "raw")
    os.makedirs(raw_dir, exist_ok=True)
    results.write_json(results_dir, run_results)

    vegeta = tools.ensure_vegeta() if settings.open_loop else None
    measured: Dict[tuple, List[Dict]] = {}
    proxy_totals: Dict[str, Dict[str, int]] = {}
    for stack in lab_stacks:
        if len(lab_stacks) > 1:
            print("[lab] stack %s: %s" % (stack.label, " ".join(stack.paths)), flush=True)
        on_stack = dataclasses.replace(settings, paths=list(stack.paths))
        lab_progress.begin(("start-squares", stack.label))
        lab_stage.start_squares(stack, "" if stack is lab_stacks[0] else "-" + stack.slug)
        if stack.tls != catalogue.PLAINTEXT:
            run_results["settings"]["stacks"][lab_stacks.index(stack)]["tls_details"] = lab_stage.tls_details()
            results.write_json(results_dir, run_results)
        for name in settings.network:
            profile, limits = catalogue.PROFILES[name], per_network[name]
            lab_progress.begin(("start-aggregator", stack.label, name))
            with lab_stage.aggregator_on(profile, limits) as started:
                info = lab_stage.aggregator_info()
                if stack.tls != catalogue.PLAINTEXT and info is not None:
                    # The aggregator's side: its mode, bundle and the TLS provider of each of its clients.
                    details = run_results["settings"]["stacks"][lab_stacks.index(stack)]["tls_details"]
                    details["aggregator"] = (info.get("aggregator") or {}).get("tls")
                run_results["settings"]["networks"][name] = network_record(profile, limits, settings, info)
                if target_record:
                    run_results["settings"]["networks"][name]["aggregator_args"] = TARGET_OWN
                if run_results["settings"]["aggregator"] is None and info is not None:
                    run_results["settings"]["aggregator"] = windows.aggregator_settings(info)
                results.write_json(results_dir, run_results)
                wrong = _verify(on_stack, started, limits.client_timeout_s)
                if wrong:
                    raise LabError(
                        "a path answers wrongly%s%s, so the lab measures nothing:\n  %s"
                        % (
                            "" if settings.network == [catalogue.LOOPBACK] else " on network " + name,
                            "" if len(lab_stacks) == 1 else " on stack " + stack.label,
                            "\n  ".join(wrong),
                        )
                    )
                on_network = dataclasses.replace(on_stack, ab_timeout_s=limits.client_timeout_s)
                measure_network(
                    name,
                    on_network,
                    started,
                    raw_dir,
                    vegeta,
                    measured,
                    run_results,
                    results_dir,
                    stack,
                    stack is lab_stacks[0],
                    lab_progress,
                )
                if settings.mix and stack is lab_stacks[0] and name == settings.network[0]:
                    lab_progress.begin(("mix",))
                    run_results["mix"] = mix.measure(
                        on_network, started, raw_dir, vegeta, run_results["runs"], stack.label, name, _log
                    )
                    results.write_json(results_dir, run_results)
            if profile.proxied and isinstance(lab_stage, stage.Stage):
                proxy_totals = _cross_check(run_results["settings"]["networks"][name], lab_stage, proxy_totals)
                results.write_json(results_dir, run_results)
        lab_stage.stop_squares()
    run_results["finished_at"] = results.now()
    results.write_json(results_dir, run_results)
    tables = view.view(run_results)["tables"]
    print()
    print(results.markdown(tables["runs"]))
    if tables["server_side"]:
        print("Server side (the services' own metrics over each measured run; ≤: an upper bound):")
        print(results.markdown(tables["server_side"]))
    troubled = [run for run in run_results["runs"] if records.problems(run)]
    if troubled:
        print(
            "[lab] ERROR: %d of %d runs had failures (see summary.md); their figures are not comparable."
            % (len(troubled), len(run_results["runs"])),
            file=sys.stderr,
        )
        return 1
    return 0


def measure_network(
    name: str,
    settings: Settings,
    started: List[services.Service],
    raw_dir: str,
    vegeta,
    measured: Dict[tuple, List[Dict]],
    run_results: Dict,
    results_dir: str,
    stack: stacks.Stack,
    first_stack: bool,
    lab_progress: progress.Progress,
) -> None:
    """Every combination on one network and stack, each warmed up first, then REPEATS times, interleaved: round r
    measures each once, so that the machine's drift hits all of them alike. The warm-ups all come before the first
    round, so that the first path measured is not the only one measured while the code every path shares is still
    cold (rest/unary, measured first right after its own warm-up, moved 18.6 % over its repeats, the next paths 0.8 to
    9.8 %). results.json is rewritten after every repeat (with parts, as each repeat's last part is measured)."""
    combos = settings.combinations()
    point_name = "rate" if settings.open_loop else "concurrency"
    where = "" if settings.network == [catalogue.LOOPBACK] else "network %s, " % name

    def named(path_name: str, shape: str, n: int, point: int) -> str:
        return "%s%s n=%d %s=%d" % (
            path_name,
            "" if settings.payload == [catalogue.SMALL] else " payload=" + shape,
            n,
            point_name,
            point,
        )

    def conditions_of(shape: str) -> bench.Conditions:
        return bench.Conditions(shape, name, "" if first_stack else stack.slug, stack.label)

    # Each combination's closed-loop pace lately (the warm-up's, then its last repeat's): DURATION's count of requests.
    paces: Dict[tuple, Optional[float]] = {}
    warm_ups: Dict[tuple, Dict] = {}

    def warm(index: int, combo: tuple) -> None:
        path_name, shape, n, point = combo
        print("[lab] %swarm-up %d/%d: %s" % (where, index, len(combos), named(*combo)), flush=True)
        combination = (stack.label, name) + combo
        lab_progress.begin(("warm-up",) + combination)
        warmed = bench.warm_up(
            catalogue.ALL[path_name],
            n,
            point,
            settings,
            started,
            raw_dir,
            log=_log,
            vegeta=vegeta,
            conditions=conditions_of(shape),
        )
        paces[combination], warm_ups[combination] = warmed.pace, warmed.record()

    parts = settings.parts

    def measure(repeat: int, index: int, combo: tuple, earlier: List[Dict], part: int) -> Optional[Dict]:
        path_name, shape, n, point = combo
        seconds = part_seconds(earlier)
        combination = (stack.label, name) + combo
        if seconds <= 0:
            lab_progress.skip(("measure",) + combination + (repeat, part))
            return None
        print(
            "[lab] %sround %d/%d, %srun %d/%d: %s"
            % (
                where,
                repeat,
                settings.repeats,
                "part %d/%d, " % (part, parts) if parts > 1 else "",
                index,
                len(combos),
                named(*combo),
            ),
            flush=True,
        )
        lab_progress.begin(("measure",) + combination + (repeat, part))
        record = bench.measure(
            catalogue.ALL[path_name],
            n,
            point,
            dataclasses.replace(settings, duration_s=seconds),
            started,
            raw_dir,
            repeat,
            log=_log,
            vegeta=vegeta,
            conditions=conditions_of(shape),
            pace=paces.get(combination),
            part=part if parts > 1 else 0,
        )
        paces[combination] = record.get("rps") or paces.get(combination)
        record["stack"] = stack.label
        expect_rounds(combination, repeat, record)
        if combination in warm_ups:
            record["warm_up"] = warm_ups[combination]
        return record

    def expect_rounds(combination: tuple, repeat: int, record: Dict) -> None:
        """The progress estimate of the combination's parts still to come, from the rounds it has just taken."""
        rounds = bench.rounds(record)
        if parts < 2 or not rounds or not record.get("time_taken_s"):
            return
        plan = bench.part_plan(settings.duration_s, parts, record["time_taken_s"] / rounds)
        for later in range(repeat, settings.repeats + 1):
            for part, seconds in enumerate(plan, 1):
                lab_progress.expect(("measure",) + combination + (later, part), seconds + 2.0 if seconds else 0.0)

    def part_seconds(earlier: List[Dict]) -> float:
        done = [record.get("time_taken_s") or 0.0 for record in earlier]
        return bench.part_seconds(settings.duration_s, parts, done) if parts > 1 else settings.duration_s

    def added_up(combo: tuple, records: List[Dict]) -> Dict:
        return bench.add_up(catalogue.ALL[combo[0]], combo[2], records)

    def kept(combo: tuple, record: Dict) -> None:
        measured.setdefault((stack.label, name) + combo, []).append(record)
        _print_outcome(record)
        # Rewritten after every repeat: an interrupted lab still leaves the runs it measured so far.
        run_results["runs"] = [
            repeats.combine(records, bench.repeat_summary) for records in measured.values() if records
        ]
        results.write_json(results_dir, run_results)

    if settings.knee:
        slo = knee.parse_slo(settings.slo)
        for index, combo in enumerate(combos, 1):
            if settings.warmup_s:
                warm(index, combo)
            key = (stack.label, name) + combo

            def at_rate(rate: int, step: int, combo: tuple = combo, key: tuple = key) -> Dict:
                print(
                    "[lab] %sknee search, rate %d/s: %s" % (where, rate, named(combo[0], combo[1], combo[2], rate)),
                    flush=True,
                )
                lab_progress.begin(("knee",) + key + (step,))
                record = bench.measure(
                    catalogue.ALL[combo[0]],
                    combo[2],
                    rate,
                    settings,
                    started,
                    raw_dir,
                    step,
                    log=_log,
                    vegeta=vegeta,
                    conditions=conditions_of(combo[1]),
                )
                record["stack"] = stack.label
                # A rate measured again (lab.core.knee: it broke on a colder machine) is its run as last measured.
                measured.pop((stack.label, name) + combo[:3] + (rate,), None)
                kept(combo[:3] + (rate,), record)
                return record

            found = knee.search(at_rate, combo[3], slo)
            for step in range(len(found.steps) + 1, knee.MAX_STEPS + 1):
                lab_progress.skip(("knee",) + key + (step,))
            run_results.setdefault("knee", []).append(knee_record(combo, name, stack.label, slo, found))
            tried = {record["rate"] for record in run_results["runs"] if record.get("rate")}
            run_results["settings"]["rate"] = sorted(tried)
            results.write_json(results_dir, run_results)
        return
    repeats.interleaved(combos, settings.repeats, measure, warm if settings.warmup_s else None, kept, parts, added_up)


def knee_record(combo: tuple, network: str, stack_label: str, slo: knee.Slo, found: knee.Search) -> Dict:
    """What results.json's `knee` keeps of one path's search: where it ended, why, and each rate it measured."""
    path_name, shape, n, _ = combo
    return {
        "path": path_name,
        "payload": shape,
        "network": network,
        "stack": stack_label,
        "n": n,
        "slo": slo.text,
        "held_rate": found.held,
        "broken_rate": found.broke,
        "why": found.why,
        "steps": [
            {
                "rate": step["rate"],
                "held": step["held"],
                slo.figure + "_ms": (step["record"].get("latency_ms") or {}).get(slo.figure),
                "sent": step["record"].get("sent"),
                "ok": step["record"].get("ok"),
            }
            for step in found.steps
        ],
    }


def network_record(
    profile: catalogue.Profile, limits: deadlines.Deadlines, settings: Settings, info: Optional[Dict]
) -> Dict:
    """What results.json says of one network: the profile, the deadlines and timeout its runs used and why, and
    the deadlines the aggregator reported it ran with."""
    record = {
        "description": profile.description,
        "proxied": profile.proxied,
        "apart": profile.apart,
        "rtt_ms": profile.rtt_ms,
        "rate_mbit_s": profile.rate_mbit_s,
        "deadlines": limits.as_dict(),
        "aggregator_args": " ".join(services.aggregator_arguments(settings, limits)),
    }
    reported = (info or {}).get("aggregator") or {}
    if reported:
        record["aggregator_reported"] = {
            "deadline_ms": reported.get("deadline-ms"),
            "call_deadline_ms": reported.get("call-deadline-ms"),
        }
    return record


def _cross_check(record: Dict, lab_stage: stage.Stage, totals_before: Dict[str, Dict[str, int]]):
    """Puts a network's bytes as Toxiproxy counted them, beside the square services' connections, into its record;
    returns Toxiproxy's totals, which the next network's counts start from."""
    try:
        check = lab_stage.bytes_cross_check(totals_before)
    except OSError as error:
        record["bytes_cross_check"] = {"error": "cannot read Toxiproxy's counters: %s" % error}
        return totals_before
    record["bytes_cross_check"] = check["by_proxy"]
    return check["totals"]


def _first_instances(instances: List[services.Instance]) -> List[services.Instance]:
    first: Dict[str, services.Instance] = {}
    for instance in instances:
        first.setdefault(instance.module, instance)
    return list(first.values())


def run_floor(
    results_dir: str,
    jvm: floor.Jvm,
    settings: Settings,
    processes: Processes,
    lab_progress: progress.Progress,
    encryption: floor.Encryption,
) -> int:
    """The bare transports, once the services are stopped: the whole machine, with the services' JVM options; under
    TLS each mode's windows too, with the run's certificates."""
    print(
        "[lab] the transport floor: the bare transports, no Spring, with the aggregator's window (services stopped)",
        flush=True,
    )
    data = results.read_json(results_dir)
    planned, _ = windows.plan(data["settings"])
    if not planned:
        print(
            "[lab] floor: no measured path has a bare transport to compare with (rest/square is a baseline, "
            "and n=0 makes no downstream call)",
            flush=True,
        )
    started = results.now()
    records = floor.measure(
        results_dir,
        data,
        jvm,
        settings.floor_warmup_s,
        settings.floor_duration_s,
        processes,
        settings.repeats,
        settings.floor_parts,
        on_step=lab_progress.begin,
        encryption=encryption,
    )
    lab_progress.finish()
    floors.attach(
        data,
        records,
        extra={"started_at": started, "finished_at": results.now(), "java_opts": jvm.java_opts, "jar": jvm.jar},
    )
    results.write_json(results_dir, data)
    table = view.floor_table(data)
    if table and table["rows"]:
        print()
        print(
            "Transport floor (each path's downstream calls/s against its bare transport's; goal: at least %d %%):"
            % round(windows.GOAL * 100)
        )
        print(results.markdown(table))
    failed = [record for record in records if "error" in record]
    if failed:
        print(
            "[lab] ERROR: %d of %d floor runs failed, so their paths have no fraction of floor (see summary.md)."
            % (len(failed), len(records)),
            file=sys.stderr,
        )
        return 1
    return 0


# A payload shape no aggregator knows, which one that knows the shapes refuses.
UNKNOWN_SHAPE = "no-such-shape"


def _verify(settings: Settings, started: List[services.Service], timeout_s: int) -> List[str]:
    """Checks every path with every payload shape at every n against the exact expected body before anything is
    measured: the aggregator answers the same squares whatever the shape, having checked every echo; and, with
    shapes, that it knows them at all: it refuses one it does not know."""
    base_urls = {s.name: s.base_url for s in started if s.base_url}
    wrong = []
    for name in settings.paths:
        path = catalogue.ALL[name]
        if settings.payload != [catalogue.SMALL]:
            problem = http_check.payload_shapes_unknown(path.url(base_urls, 1, UNKNOWN_SHAPE), timeout_s)
            if problem:
                wrong.append(problem)
        for shape in settings.payload:
            for n in settings.n:
                print(
                    "[lab] checking %s%s n=%d answers correctly"
                    % (name, "" if shape == catalogue.SMALL else " payload=" + shape, n),
                    flush=True,
                )
                problem = http_check.answer_mismatch(path, path.url(base_urls, n, shape), n, timeout_s)
                if problem:
                    wrong.append(problem)
    return wrong


def load_command(settings: Settings, timeouts: List[int]) -> Dict:
    """How each measured run sends its load, as results.json records it; a timeout per network when the networks
    have different ones (settings.networks says each)."""
    timeout = str(timeouts[0]) if len(timeouts) == 1 else "<network's timeout>"
    if settings.open_loop:
        return {
            "vegeta_command": "echo 'GET <url>' | vegeta attack -rate=<rate>/1s -duration=%gs -timeout=%ss"
            % (settings.duration_s, timeout),
            "keep_alive": True,
        }
    return {
        "ab_command": "ab -n %s -c <concurrency> -s %s -q -r -e <csv> <url>"
        % (settings.requests or "<rounds that fill %gs>" % settings.duration_s, timeout),
        "keep_alive": False,
    }


def _print_outcome(run) -> None:
    found = records.problems(run)
    if "error" in run:
        _log("ERROR: " + run["error"])
        return
    latency = run["latency_ms"]
    _log(
        "%.2f req/s, p50 %s ms, p99 %s ms, failed %d%s%s"
        % (
            run["rps"],
            latency["p50"],
            latency["p99"],
            run["failed"],
            ", errors %s" % run["errors"] if run.get("errors") else "",
            "  <- " + "; ".join(found) if found else "",
        )
    )
    side = run.get("server_side") or {}
    if "error" in side:
        _log("warning: " + side["error"])
    elif side:
        _log(
            "server side: %s square calls served, %s downstream calls made"
            % (side.get("square_calls"), side.get("downstream_calls", "-"))
        )


def _log(message: str) -> None:
    print("  " + message.strip(), flush=True)
