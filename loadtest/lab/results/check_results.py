"""Checks a results folder the way CI does: every path present, no failures, sane figures, and the services'
own counts agree with ab's: every square came from its own downstream call (or stream message). With a
transport floor, every floor run succeeded with the aggregator's window and the services' JVM options, and
each path's fraction is its downstream calls per second over its floor's. (Whether a path reaches the 60 %
goal is a finding, not a check: it is in the results, and fails nothing.) Every run records its payload shape,
its network and its bytes per call, and on a network with a round trip its latency is at least the round trips its
calls must make one after the other.

    python3 -m lab.results.check_results DIR [--round-trips] [--knee-bracketed]   (run from loadtest/)

--round-trips also asks that on each network with a round trip grpc/stream's p50, one round trip for all its
messages, be below rest/unary's, which pays one per in-flight window of calls (the Maven build's NETWORK run).
--knee-bracketed asks that each knee search found both a rate that held its SLO and one that broke it (the Maven
build's knee run, whose SLO makes sure the machine can do both).
"""

import json
import math
import sys
from typing import Dict, List, Optional, Tuple

from ..core import catalogue, records, windows
from ..core.errors import FloorError, exit_status
from ..core.settings import SOAK_MIN_S
from . import mix, results, soak

# What the aggregator's GET /rest/square/unary/{number} takes, request line and headers (Reactor Netty's host,
# user-agent and accept: about 110 bytes): a small REST unary call's request bytes outside it were not measured
# at the socket.
REST_GET_BYTES = (60, 400)


# The shortest measured run whose services must show CPU time: 10 clock ticks.
MIN_CPU_WINDOW_S = 0.1


def problems(data: Dict) -> List[str]:
    """Every reason the results are not a clean, complete lab run; empty when they are."""
    found = []
    settings = data["settings"]
    open_loop = settings.get("load") == "open"
    points = settings["rate"] if open_loop else settings["concurrency"]
    expected = {
        (stack, net, p, shape, n, point)
        for stack, chosen in records.stack_paths(settings).items()
        for net in records.listed(settings, "network")
        for p in chosen
        for shape in records.listed(settings, "payload")
        for n in settings["n"]
        for point in points
    }
    if settings.get("knee"):
        # A knee run measured the rates its searches chose, each path its own.
        expected = {
            (entry["stack"], entry["network"], entry["path"], entry["payload"], entry["n"], step["rate"])
            for entry in data.get("knee") or []
            for step in entry["steps"]
        }
        found += knee_problems(data)
    present = {records.key(run) for run in data["runs"]}
    for stack, net, path, shape, n, point in sorted(expected - present):
        found.append(
            "no run for path %s n=%d %s=%d%s%s%s"
            % (
                path,
                n,
                "rate" if open_loop else "concurrency",
                point,
                "" if shape == catalogue.SMALL else " payload=" + shape,
                "" if net == catalogue.LOOPBACK else " network=" + net,
                " on " + stack if stack else "",
            )
        )
    if not data.get("finished_at"):
        found.append("the lab did not finish (finished_at is empty)")
    for run in data["runs"]:
        found += [
            "%s: %s" % (records.run_name(run), problem)
            for problem in run_problems(run, settings.get("repeats", 1))
            + network_problems(run, settings)
            + cpu_read_twice_problems(run, settings.get("replicas") or 1)
        ]
        if open_loop and settings.get("duration_s", 0) >= SOAK_MIN_S and not records.failed(run):
            found += [
                "%s: %s" % (records.run_name(run), problem)
                for problem in (
                    soak.problems(run) if run.get("per_minute") else ["a soak run without its per-minute series"]
                )
            ]
    found += shape_bytes_problems(data["runs"])
    found += mix.problems(data)
    found += floor_check(data)
    found += tls_problems(settings)
    found += target_problems(data)
    if any(entry.get("tls", catalogue.PLAINTEXT) != catalogue.PLAINTEXT for entry in settings.get("stacks") or []):
        written = json.dumps(data)
        # The run's keys, or the folder that held them, must not be in what it keeps.
        found += [
            "results.json holds %s" % what for what in ("PRIVATE KEY", catalogue.TLS_FOLDER_PREFIX) if what in written
        ]
    return found


def knee_problems(data: Dict) -> List[str]:
    """LOAD=knee: every path searched, and each search's held rate one that held its SLO, below the one that broke."""
    found = []
    entries = data.get("knee") or []
    searched = {entry["path"] for entry in entries}
    found += ["knee: %s was not searched" % path for path in data["settings"]["paths"] if path not in searched]
    for entry in entries:
        name = "%s n=%d" % (entry["path"], entry["n"])
        by_rate = {step["rate"]: step for step in entry["steps"]}
        figure = entry["slo"].split(" ")[0]
        held, broke = by_rate.get(entry["held_rate"]), by_rate.get(entry["broken_rate"])
        if entry["held_rate"] is not None and not (held and held["held"]):
            found.append(
                "knee: %s says it held %d/s, but that rate broke %s (%s %s ms)"
                % (name, entry["held_rate"], entry["slo"], figure, (held or {}).get(figure + "_ms"))
            )
        if entry["broken_rate"] is not None and (not broke or broke["held"]):
            found.append("knee: %s says %d/s broke %s, but it held" % (name, entry["broken_rate"], entry["slo"]))
        if None not in (entry["held_rate"], entry["broken_rate"]) and entry["held_rate"] >= entry["broken_rate"]:
            found.append(
                "knee: %s held %d/s, not below the %d/s that broke" % (name, entry["held_rate"], entry["broken_rate"])
            )
    return found


def tls_problems(settings: Dict) -> List[str]:
    """Under TLS: the aggregator ran in its stack's mode, and each square service it called completed the lab's
    handshake and named its provider."""
    found = []
    for entry in settings.get("stacks") or []:
        mode = entry.get("tls", catalogue.PLAINTEXT)
        if mode == catalogue.PLAINTEXT:
            continue
        details = entry.get("tls_details") or {}
        said = (details.get("aggregator") or {}).get("mode")
        if said != mode:
            found.append("stack %s: the aggregator said TLS mode %s, not %s" % (entry["label"], said, mode))
        for transport, square in sorted((details.get("squares") or {}).items()):
            if "error" in square or not square.get("protocol") or not square.get("provider"):
                found.append(
                    "stack %s: %s's square service: %s"
                    % (entry["label"], transport, square.get("error") or "no protocol or provider recorded")
                )
            elif square.get("mode") != mode:
                found.append(
                    "stack %s: %s's square service said TLS mode %s, not %s"
                    % (entry["label"], transport, square.get("mode"), mode)
                )
        if not details.get("squares"):
            found.append("stack %s: no square service's TLS recorded" % entry["label"])
        if settings.get("tls_provider") == "jdk":
            # Every side on the JDK's SSLEngine.
            said = [
                ("the aggregator's " + name, value)
                for name, value in (details.get("aggregator") or {}).get("providers", {}).items()
            ]
            said += [
                (name + "'s square service", square.get("provider"))
                for name, square in (details.get("squares") or {}).items()
            ]
            found += [
                "stack %s: TLS_PROVIDER=jdk, but %s encrypts with %s" % (entry["label"], side, value)
                for side, value in said
                if value and not value.startswith("JDK")
            ]
        elif settings.get("tls_provider") == "openssl":
            # The gRPC square service's Netty at least carries BoringSSL.
            grpc = ((details.get("squares") or {}).get("grpc") or {}).get("provider")
            if grpc and not grpc.startswith("OpenSSL"):
                found.append(
                    "stack %s: TLS_PROVIDER=openssl, but the gRPC square service encrypts with %s"
                    % (entry["label"], grpc)
                )
    return found


def shape_bytes_problems(runs: List[Dict]) -> List[str]:
    """A payload shape carries more than the small call both ways, at the same path, network, n and setting: one
    that does not was not carried (an aggregator that ignored ?payload= answers the same squares)."""
    wire = {records.key(run): run.get("bytes_per_call") or {} for run in runs if not records.failed(run)}
    found = []
    for run in runs:
        stack, net, path, shape, n, point = key = records.key(run)
        small = wire.get((stack, net, path, catalogue.SMALL, n, point), {})
        own = wire.get(key, {})
        if shape == catalogue.SMALL or None in (small.get("request"), own.get("request")):
            continue
        if own["request"] <= small["request"] or own["response"] <= small["response"]:
            found.append(
                "%s: %s request and %s response bytes per call, no more than the small call's %s and %s: the "
                "shape was not carried"
                % (records.run_name(run), own["request"], own["response"], small["request"], small["response"])
            )
    return found


def run_problems(run: Dict, repeats: int = 1) -> List[str]:
    found = records.problems(run)
    if records.failed(run):
        return found
    measured = len(run.get("repeats") or [None])
    if measured != repeats:
        found.append("%d repeats, REPEATS=%d" % (measured, repeats))
    verified = run.get("verified")
    if run.get("load") == "open":
        found += _open_loop_problems(run, measured)
    else:
        sent = sum(repeat.get("requests") or run["requests"] for repeat in run.get("repeats") or [run])
        if run["completed"] != sent:
            found.append("completed %d of %d requests" % (run["completed"], sent))
        if isinstance(verified, dict) and verified.get("passed", run["completed"]) != run["completed"]:
            found.append("%s of %d responses had the expected answer's length" % (verified["passed"], run["completed"]))
    latency = run["latency_ms"]
    order = [latency.get(key) for key in ("p50", "p90", "p99", "p99_9", "max") if key in latency]
    if None in order or order != sorted(order):
        found.append("percentiles out of order: p50, p90, p99, max = %s" % order)
    if not run["rps"] > 0:
        found.append("requests per second is %s" % run["rps"])
    for service in catalogue.ALL[run["path"]].services:
        seconds = run["cpu"].get(service, {}).get("seconds")
        # CPU time comes in clock ticks of 10 ms: a window of a few ticks may honestly hold none of a service's.
        measurable = (run.get("time_taken_s") or MIN_CPU_WINDOW_S) >= MIN_CPU_WINDOW_S
        if measurable and (not seconds or seconds <= 0):
            found.append("no CPU seconds recorded for %s, which served this path" % service)
        if not run["rss_mb"].get(service):
            found.append("no peak RSS recorded for %s" % service)
    found += server_side_check(run)[0]
    found += conditions_problems(run) + bytes_problems(run)
    interval = max([(run["cpu"].get(service) or {}).get("scrape_interval_s") or 0 for service in run["cpu"]])
    window_s = run.get("time_taken_s") or run.get("duration_s") or 0
    if interval and window_s < 2 * interval:
        found.append(
            "a window of %.1f s, under two of Prometheus's scrape intervals (%g s): the idle time read with it "
            "around the window is too large a share; measure for longer (DURATION)" % (window_s, interval)
        )
    return found


def target_problems(data: Dict) -> List[str]:
    """TARGET: every service that served a run was read the way the run says (its own counters, or Prometheus), and
    says where it ran."""
    found_target = data["settings"].get("target_details")
    if not found_target:
        return []
    found = [
        '%s: says nothing of where it ran (GET /actuator/info has no "process")' % where["actuator"]
        for replicas in found_target["services"].values()
        for where in replicas
        if "host" not in where
    ]
    for run in data["runs"]:
        if records.failed(run):
            continue
        for service in catalogue.ALL[run["path"]].services:
            read = (run["cpu"].get(service) or {}).get("read")
            if read != found_target["read"]:
                found.append(
                    "%s: %s's CPU was read from %s, not from %s as TARGET says"
                    % (records.run_name(run), service, read or "/proc", found_target["read"])
                )
    return found


# A service's CPU over a window by /proc and by its own counter (lab.target) may differ by the ticks at either end
# and by what the scrapes of the counter cost, read just outside /proc's samples: up to 60 ms in CI's small runs,
# whose JVMs have compiled little of the scrape.
READ_TWICE_SLACK_S = 0.08
# Below this much CPU in a window, a scrape of a cold JVM (up to 100 ms in CI's smallest runs) is most of the
# difference: only larger windows are held to agree.
READ_TWICE_MIN_S = 2.0
READ_TWICE_SHARE = 0.03


def cpu_read_twice_problems(run: Dict, replicas: int = 1) -> List[str]:
    """Where the lab read a service's CPU both ways (its own services), the two agree in every repeat: what TARGET
    reads of services elsewhere is the figure /proc gives here. Each part of a repeat and each replica is read at its
    own ticks, so the slack grows with them."""
    found = [
        "%s's own CPU counter could not be read beside /proc: %s" % (service, entry["own_error"])
        for service, entry in (run.get("cpu") or {}).items()
        if isinstance(entry, dict) and entry.get("own_error")
    ]
    for number, repeat in enumerate(run.get("repeats") or [], 1):
        for service, both in (repeat.get("cpu_read_twice") or {}).items():
            # The aggregator runs once, whatever the square services' replicas.
            slack = (
                READ_TWICE_SLACK_S
                * (repeat.get("parts") or 1)
                * (1 if service == catalogue.AGGREGATOR else max(1, replicas))
            )
            proc_s, own_s = both["proc_s"], both["own_s"]
            if proc_s >= READ_TWICE_MIN_S and abs(own_s - proc_s) > slack + READ_TWICE_SHARE * proc_s:
                found.append(
                    "repeat %d: %s's CPU was %.3f s by /proc but %.3f s by its own process_cpu_time_ns_total"
                    % (number, service, proc_s, own_s)
                )
    return found


def conditions_problems(run: Dict) -> List[str]:
    """A run says which payload shape it carried and which network it crossed."""
    found = []
    if run.get("payload") not in catalogue.PAYLOADS:
        found.append("payload %r is not one of %s" % (run.get("payload"), ", ".join(catalogue.PAYLOADS)))
    if run.get("network") not in catalogue.NETWORKS:
        found.append("network %r is not one of %s" % (run.get("network"), ", ".join(catalogue.NETWORKS)))
    if run.get("network") in catalogue.PROFILES and catalogue.PROFILES[run["network"]].proxied:
        seconds = (run["cpu"].get(catalogue.PROXY) or {}).get("seconds")
        if not seconds or seconds <= 0:
            found.append("no CPU seconds recorded for Toxiproxy, which carried its calls")
    return found


def bytes_problems(run: Dict) -> List[str]:
    """Every run has its bytes per call, request and response above 0; the article's call over REST, a GET with
    its headers, has as many request bytes as such a GET has."""
    record = run.get("bytes_per_call")
    if not record:
        return ["no bytes per call (bytes_per_call is missing)"]
    if records.failed(record):
        return [record[records.ERROR]]
    if "not_measured" in record:
        # TARGET: the square service runs where the lab counts no connections.
        return []
    found = [
        "%s bytes per call is %s" % (side, record.get(side))
        for side in ("request", "response")
        if not (record.get(side) or 0) > 0
    ]
    low, high = REST_GET_BYTES
    if (
        run["path"] == "rest/unary"
        and records.payload(run) == catalogue.SMALL
        and not found
        and not low <= record["request"] <= high
    ):
        found.append(
            "%s request bytes per call, but a GET with its headers has %d to %d" % (record["request"], low, high)
        )
    return found


def network_problems(run: Dict, settings: Dict) -> List[str]:
    """On a network with a round trip, a request's p50 is at least the round trips its calls make one after the
    other: unary calls one per window of in-flight calls, ping-pong one per message, a stream one in all. Below
    that, the network's latency did not apply."""
    profile = (settings.get("networks") or {}).get(records.network(run)) or {}
    if records.failed(run) or not profile.get("rtt_ms"):
        return []
    bound = (
        catalogue.ALL[run["path"]].round_trips(run["n"], (settings.get("aggregator") or {}).get("in_flight", 1))
        * profile["rtt_ms"]
    )
    p50 = run["latency_ms"].get("p50")
    if p50 is None or p50 >= bound:
        return []
    return [
        "p50 %s ms, below the %g ms that its round trips of %g ms take at least on network %s: the network's "
        "latency did not apply" % (p50, bound, profile["rtt_ms"], records.network(run))
    ]


def round_trip_problems(data: Dict) -> List[str]:
    """--round-trips: on each network with a round trip, grpc/stream's p50 is below rest/unary's at the same
    payload, n and concurrency, and both were measured."""
    found = []
    networks = data["settings"].get("networks") or {}
    runs = {records.key(run): run for run in data["runs"] if not records.failed(run)}
    for (stack, net, path, shape, n, point), unary in runs.items():
        if path != "rest/unary" or not (networks.get(net) or {}).get("rtt_ms"):
            continue
        stream = runs.get((stack, net, "grpc/stream", shape, n, point))
        if stream is None:
            found.append("%s: no grpc/stream run beside it to compare" % records.run_name(unary))
        elif not stream["latency_ms"]["p50"] < unary["latency_ms"]["p50"]:
            found.append(
                "%s: grpc/stream's p50 %s ms is not below rest/unary's %s ms, though its messages share one "
                "round trip" % (records.run_name(unary), stream["latency_ms"]["p50"], unary["latency_ms"]["p50"])
            )
    if not any(path == "rest/unary" and (networks.get(net) or {}).get("rtt_ms") for _, net, path, *_ in runs):
        found.append("--round-trips: no rest/unary run on a network with a round trip")
    return found


def _open_loop_problems(run: Dict, repeats: int) -> List[str]:
    """An open-loop run sent its whole schedule, every answer it counts was the exact expected body, and its
    counts add up."""
    found = []
    scheduled = round(run["rate"] * run["duration_s"]) * repeats
    if run["sent"] != scheduled:
        found.append("sent %d requests, the schedule had %d (rate x duration x repeats)" % (run["sent"], scheduled))
    errors = run.get("errors") or {}
    verified = run.get("verified") or {}
    if verified.get("checked") != run["ok"] + errors.get("wrong_answer", 0):
        found.append(
            "%s 200 answers had their body checked, but %d were right and %d wrong"
            % (verified.get("checked"), run["ok"], errors.get("wrong_answer", 0))
        )
    # Shedding (503) and timing out past saturation are what a rate sweep shows; anything else is a broken run.
    broken = {kind: count for kind, count in errors.items() if kind not in ("shed_503", "timeout")}
    if broken:
        found.append("errors other than sheds and timeouts: %s" % ", ".join("%s %d" % item for item in broken.items()))
    return found


def server_side_check(run: Dict) -> Tuple[List[str], Optional[str]]:
    """(problems, why the count check was skipped or None) of a run's server_side figures.

    The strongest check the lab can make: over exactly the measured run (the warm-up is before the first
    scrape), the square service served square_calls == the aggregator's downstream_calls == completed x n,
    and the aggregator counted completed successful requests. With failed requests the counts cannot agree,
    so the check is skipped (the failures fail the run anyway).
    """
    if records.failed(run):
        return [], None
    side = run.get("server_side")
    if not side:
        return ["no server-side figures (server_side is missing)"], None
    if records.failed(side):
        return [side[records.ERROR]], None
    if run["failed"] or run["non2xx"]:
        return [], "%d failed and %d non-2xx requests: square calls not compared with requests x n" % (
            run["failed"],
            run["non2xx"],
        )
    path = catalogue.ALL[run["path"]]
    completed = run["completed"]
    expected = completed * path.calls_per_request(run["n"])
    found = []
    if path.target == catalogue.AGGREGATOR:
        if side.get("aggregator_requests") != completed:
            found.append(
                "the aggregator counted %s successful requests, ab completed %d"
                % (side.get("aggregator_requests"), completed)
            )
        if side.get("downstream_calls") != expected:
            found.append(
                "the aggregator made %s downstream calls, expected %d (%d requests x n=%d)"
                % (side.get("downstream_calls"), expected, completed, run["n"])
            )
    if side.get("square_calls") != expected:
        found.append(
            "%s served %s square calls, expected %d (%d requests x %d)"
            % (
                side.get("square_service", "the square service"),
                side.get("square_calls"),
                expected,
                completed,
                path.calls_per_request(run["n"]),
            )
        )
    return found, None


def floor_check(data: Dict) -> List[str]:
    """The problems of the transport floor: present when FLOOR=1, every distinct window of the measured
    paths run once without error, each with the window the aggregator had and the services' JVM options, and
    each path's fraction == its downstream calls per second (req/s x n) / its floor's calls per second."""
    settings = data["settings"]
    section = data.get("floor")
    if section is None:
        if settings.get("floor"):
            return ["FLOOR=1, but results.json has no floor section: the floor did not run or did not finish"]
        return []
    found = []
    if section.get("aggregator") != settings.get("aggregator"):
        found.append(
            "floor: made for the aggregator settings %s, but the aggregator ran with %s"
            % (section.get("aggregator"), settings.get("aggregator"))
        )
    runs = section.get("runs", [])
    # Results from before the floor ran in every TLS mode have plaintext windows only, and compared every stack with
    # them: check them as they were made.
    before_tls_floors = runs and not any("tls" in (record.get("window") or {}) for record in runs)
    as_made = dict(settings, tls=[catalogue.PLAINTEXT]) if before_tls_floors else settings
    try:
        planned, by_combination = windows.plan(as_made)
    except FloorError as error:
        return found + ["floor: %s" % error]
    by_window = {}
    for record in section.get("runs", []):
        window = windows.Window.from_record(record["transport"], record["window"])
        by_window[window] = record
        label = "floor %s, %s" % (window.transport, window.describe())
        if records.failed(record):
            found.append("%s: %s" % (label, record[records.ERROR]))
            continue
        found += ["%s: %s" % (label, problem) for problem in window.check(record.get("settings") or {})]
        if not (record.get("calls_per_second") or 0) > 0:
            found.append("%s: calls per second is %s" % (label, record.get("calls_per_second")))
        measured = len(record.get("repeats") or [None])
        if measured != settings.get("repeats", 1):
            found.append("%s: %d repeats, REPEATS=%d" % (label, measured, settings.get("repeats", 1)))
        found += ["%s: %s" % (label, problem) for problem in _floor_tls_problems(window, record, settings)]
        java_opts = (record.get("floor_settings") or {}).get("java_opts")
        if java_opts != settings.get("java_opts"):
            found.append(
                "%s: ran with JAVA_OPTS %r, the services with %r" % (label, java_opts, settings.get("java_opts"))
            )
    for window in planned:
        if window not in by_window:
            found.append("no floor run for %s, %s" % (window.transport, window.describe()))
    for run in data["runs"]:
        compared = by_combination.get(windows.combination(run, settings))
        if compared is None or records.failed(run) or not windows.compared_with_floor(run):
            if run.get("floor") and not windows.compared_with_floor(run):
                found.append(
                    "%s: a fraction of floor, but the floor is for the small payload on loopback only"
                    % records.run_name(run)
                )
            continue
        found += [
            "%s: %s" % (records.run_name(run), problem)
            for problem in _path_floor_problems(run, compared, by_window.get(compared))
        ]
    return found


def _floor_tls_problems(window: windows.Window, record: Dict, settings: Dict) -> List[str]:
    """A TLS window's run must say it was encrypted as asked: its mode, each side on the TLS_PROVIDER's engine, and
    what its handshake agreed; a plaintext window's must say nothing of TLS."""
    said = record.get("tls")
    if window.tls is None:
        return ["ran over TLS, but the window is plaintext"] if said else []
    if not said:
        return ["no TLS record, but the window is %s" % catalogue.TLS_NAMES[window.tls]]
    found = []
    if said.get("mode") != window.tls:
        found.append("ran %s, the window is %s" % (said.get("mode"), window.tls))
    engine = "JDK" if settings.get("tls_provider") == "jdk" else "OpenSSL"
    for side in ("server_provider", "client_provider"):
        if not str(said.get(side) or "").startswith(engine):
            found.append("%s is %s, TLS_PROVIDER asked for %s" % (side.replace("_", " "), said.get(side), engine))
    expected_alpn = "http/1.1" if window.transport == "rest_unary" else "h2"
    if said.get("alpn") != expected_alpn or not said.get("protocol"):
        found.append(
            "the handshake agreed %s with ALPN %s, expected a protocol and %s"
            % (said.get("protocol"), said.get("alpn"), expected_alpn)
        )
    return found


def _path_floor_problems(run: Dict, window: "windows.Window", floor_run: Optional[Dict]) -> List[str]:
    record = run.get("floor")
    if not record:
        return ["no floor object, though its transport's floor ran"]
    if (record.get("transport"), record.get("window")) != (window.transport, window.as_dict()):
        return [
            "compared with the floor of %s %s, but the aggregator's window was %s %s"
            % (record.get("transport"), record.get("window"), window.transport, window.as_dict())
        ]
    if record.get("above_floor"):
        # A finding of the run (a floor that failed, said in the report and in the check's notes), not a broken chain:
        # the Maven build's short floors may not be warm.
        return []
    if records.failed(record):
        # A failed floor run is reported once, as the floor's problem.
        return [] if floor_run is not None and records.failed(floor_run) else [record[records.ERROR]]
    if floor_run is None or records.failed(floor_run):
        return ["a fraction of floor without a successful floor run for its window"]
    found = []
    if record["floor_calls_per_second"] != floor_run["calls_per_second"]:
        found.append(
            "floor calls/s %s, but its floor run made %s"
            % (record["floor_calls_per_second"], floor_run["calls_per_second"])
        )
    downstream = run["rps"] * run["n"]
    if not math.isclose(record["path_calls_per_second"], downstream, rel_tol=1e-6, abs_tol=0.01):
        found.append("downstream calls/s %s, but req/s x n = %s" % (record["path_calls_per_second"], downstream))
    fraction = record["path_calls_per_second"] / record["floor_calls_per_second"]
    if record.get("at_floor"):
        # Above the floor's median within the noise of both: 100 % (lab.results.floors), never more.
        if fraction <= 1:
            found.append("at its floor, but %.6f of it, not above it within the noise" % fraction)
        fraction = 1.0
    # Kept to 4 decimals.
    if abs(record["fraction"] - fraction) > 0.0000501:
        found.append(
            "fraction %s, but %s / %s = %.6f"
            % (record["fraction"], record["path_calls_per_second"], record["floor_calls_per_second"], fraction)
        )
    if record.get("goal") != windows.GOAL or record.get("met") != (record["fraction"] >= windows.GOAL):
        found.append(
            "goal %s met %s does not follow from the fraction %s and the goal %s"
            % (record.get("goal"), record.get("met"), record["fraction"], windows.GOAL)
        )
    return found


def notes(data: Dict) -> List[str]:
    """What the check did not compare, and why."""
    found = []
    for run in data["runs"]:
        record = run.get("floor") or {}
        if record.get("above_floor"):
            # The Maven build's two-second floor runs are a check of the chain, not of the numbers.
            found.append("%s: %s" % (records.run_name(run), record[records.ERROR]))
        skipped = server_side_check(run)[1]
        if skipped:
            found.append("%s: server-side count check skipped: %s" % (records.run_name(run), skipped))
        closed = (run.get("bytes_per_call") or {}).get("connections_closed")
        if closed:
            # Mostly the aggregator's pool letting go of connections idle for longer than its max idle time, which
            # carried nothing in the run; a busy one that closed would take its bytes of the run with it.
            found.append(
                "%s: %d of the square service's connections closed during the run: idle ones carried "
                "nothing, but any bytes a busy one carried in the run are not in its bytes per call"
                % (records.run_name(run), closed)
            )
    return found


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    options = [argument for argument in argv if argument.startswith("--")]
    folders = [argument for argument in argv if not argument.startswith("--")]
    if len(folders) != 1 or set(options) - {"--round-trips", "--knee-bracketed"}:
        print(__doc__, file=sys.stderr)
        return 2
    argv = folders
    data = results.read_json(argv[0])
    broken = results.violations(data)
    if broken:
        # A file that breaks its schema is named key by key; its figures are not checked, being unreadable as such.
        for violation in broken:
            print("[check] FAIL: schema: %s" % violation, file=sys.stderr)
        return 1
    found = problems(data) + (round_trip_problems(data) if "--round-trips" in options else [])
    if "--knee-bracketed" in options:
        found += [
            "knee: %s n=%d found no %s rate for %s (%s)"
            % (entry["path"], entry["n"], which, entry["slo"], entry["why"])
            for entry in data.get("knee") or [{"path": "no search", "n": 0, "slo": "", "why": "not a knee run"}]
            for which, rate in (("held", entry.get("held_rate")), ("broken", entry.get("broken_rate")))
            if rate is None
        ]
    for note in notes(data):
        print("[check] note: %s" % note, file=sys.stderr)
    for problem in found:
        print("[check] FAIL: %s" % problem, file=sys.stderr)
    if found:
        return 1
    floor_runs = len((data.get("floor") or {}).get("runs", []))
    print(
        "[check] OK: %d runs in %s, all verified, 0 failed, 0 non-2xx, percentiles in order, CPU recorded, "
        "square calls served == downstream calls == requests x n, %s%s%s"
        % (
            len(data["runs"]),
            argv[0],
            (
                "CPU and memory read from %s, each service saying where it ran"
                % data["settings"]["target_details"]["read"]
                if data["settings"].get("target_details")
                else "bytes per call recorded"
                + (
                    ", CPU by /proc and by each service's own counter agreeing"
                    if any(
                        both["proc_s"] >= READ_TWICE_MIN_S
                        for run in data["runs"]
                        for repeat in run.get("repeats") or []
                        for both in (repeat.get("cpu_read_twice") or {}).values()
                    )
                    else ""
                )
            ),
            (
                "; %d floor runs, each with the aggregator's window, fractions consistent" % floor_runs
                if "floor" in data
                else ""
            ),
            "; on each network with a round trip, grpc/stream's p50 below rest/unary's"
            if "--round-trips" in options
            else "",
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(exit_status(main))
