"""The results folder's two text files: results.json (a contract other tools read) and summary.md."""

import json
import os
from typing import Dict, List, Optional, Tuple

from .paths import AGGREGATOR, SMALL, SQUARE_GRPC, SQUARE_REST

# Toxiproxy, between the aggregator and the square services on a NETWORK other than loopback, is a process of the run
# as the services are: its CPU is shown beside theirs, never in "other".
PROXY = "toxiproxy"
SERVICE_ORDER = (AGGREGATOR, SQUARE_REST, SQUARE_GRPC, PROXY)
LOOPBACK = "loopback"


def write_json(results_dir: str, results: Dict) -> str:
    target = os.path.join(results_dir, "results.json")
    # Written to a side file and renamed, so that a reader never sees half a file.
    with open(target + ".part", "w") as handle:
        json.dump(results, handle, indent=2)
        handle.write("\n")
    os.replace(target + ".part", target)
    return target


def read_json(results_dir: str) -> Dict:
    with open(os.path.join(results_dir, "results.json")) as handle:
        return json.load(handle)


def problems(run: Dict) -> List[str]:
    """Why a run's figures cannot be trusted as they stand; empty when they can."""
    if "error" in run:
        return [run["error"]]
    found = []
    verified = run.get("verified")
    if not verified:
        found.append("the answer was not verified")
    elif isinstance(verified, dict) and verified.get("response_bytes") not in (None, verified.get("expected_bytes")):
        found.append("responses of %s bytes where the expected answer has %s" % (verified["response_bytes"],
                                                                                verified["expected_bytes"]))
    if run.get("load") == "open":
        # Past its saturation a path sheds (503) or times out: the rate sweep's finding, not a broken run. A wrong
        # answer is never that.
        wrong = (run.get("errors") or {}).get("wrong_answer")
        return found + (["%d wrong answers" % wrong] if wrong else [])
    if run["failed"]:
        found.append("%d failed requests" % run["failed"])
    if run["non2xx"]:
        found.append("%d non-2xx responses" % run["non2xx"])
    return found


def point(run: Dict) -> int:
    """What a run's load was set to: its concurrency (closed loop, ab) or its rate (open loop, Vegeta)."""
    return run["rate"] if run.get("load") == "open" else run["concurrency"]


def payload(run: Dict) -> str:
    """A run's payload shape; small in results from before PAYLOAD."""
    return run.get("payload") or SMALL


def network(run: Dict) -> str:
    """A run's network; loopback in results from before NETWORK."""
    return run.get("network") or LOOPBACK


def stack(run: Dict) -> str:
    """A run's stack, as lab.stacks labels it ("tomcat · JDK 17"); empty in results from before REST_SERVER."""
    return run.get("stack") or ""


def key(run: Dict) -> Tuple[str, str, str, str, int, int]:
    """What tells a run from every other of its lab run: (stack, network, path, payload, n, concurrency or rate)."""
    return stack(run), network(run), run["path"], payload(run), run["n"], point(run)


def listed(settings: Dict, name: str) -> List[str]:
    """The payload shapes, networks or stacks of a lab run's settings ("payload", "network", "stack"), as older
    results had them."""
    if name == "stack":
        return [entry["label"] for entry in settings.get("stacks") or []] or [""]
    return settings.get(name) or [SMALL if name == "payload" else LOOPBACK]


def stack_paths(settings: Dict) -> Dict[str, List[str]]:
    """The paths each stack measured: all of them on the first, the REST paths on one that only changed the server."""
    return {entry["label"]: entry["paths"] for entry in settings.get("stacks") or []} or {"": settings["paths"]}


def run_name(run: Dict) -> str:
    """A run's path and setting, as messages name it: rest/unary n=1000 c=100, or ... rate=50/s, with its payload
    shape and network when they are not small and loopback, and its stack: rest/unary n=20 c=1 payload=wide network=lan
    on netty · reactor-netty client · JDK 17."""
    setting = "rate=%d/s" % run["rate"] if run.get("load") == "open" else "c=%d" % run["concurrency"]
    conditions = "".join(" %s=%s" % (name, value) for name, value, default in (
        ("payload", payload(run), SMALL), ("network", network(run), LOOPBACK)) if value != default)
    conditions += " on " + stack(run) if stack(run) else ""
    return "%s n=%d %s%s" % (run["path"], run["n"], setting, conditions)


def path_cpu(run: Dict, field: str, with_proxy: bool = False) -> float:
    """CPU per request or per call of the services that served the run's path (an idle one's is not the path's), and
    with_proxy of Toxiproxy, which carried its calls on a network."""
    names = run["services"] + ([PROXY] if with_proxy else [])
    return sum((run["cpu"].get(name) or {}).get(field) or 0 for name in names)


def services_in(results: Dict) -> List[str]:
    """The services that ran, in the report's order."""
    present = set()
    for run in results["runs"]:
        present.update(name for name in run.get("cpu", {}) if name in SERVICE_ORDER)
    return [name for name in SERVICE_ORDER if name in present]


def markdown(table: Optional[Dict]) -> str:
    """One of the report's tables (lab.view computes them, once) as Markdown, which also reads well in a terminal;
    empty for a table the results do not have. A cell below the goal is bold."""
    if not table:
        return ""
    rows = []
    for row in table["rows"]:
        cells = []
        for cell in row["cells"]:
            text = cell if isinstance(cell, str) else cell["text"]
            text = text.replace("\n", ", ").replace("|", "\\|")
            if isinstance(cell, dict) and "below-goal" in cell.get("class", "") and text:
                text = "**%s**" % text
            cells += [text] + [""] * ((cell.get("colspan", 1) if isinstance(cell, dict) else 1) - 1)
        rows.append(cells)
    return markdown_table(table["heads"], rows)


def floor_markdown(floor_view: Optional[Dict], tables: Dict) -> List[str]:
    """summary.md's "Transport floor" section: what the floor is, each path against it, and the floor runs."""
    if floor_view is None:
        return []
    lines = ["## Transport floor", "", floor_view["subtitle"] + " Fraction of floor: the path's downstream calls per "
             "second (req/s × n) ÷ its transport's floor calls per second. CPU per call: the path's services "
             "(aggregator and square service) against the floor's client and server, each over its measured run. "
             "Load: the one-minute load average before the path's run, and when the floor's measuring began.", ""]
    table = markdown(tables["floor"])
    lines += [table] if tables["floor"]["rows"] else [
        "No measured path has a floor (rest/square is a baseline; n=0 makes no calls).", ""]
    lines += ["The floor runs:", "", markdown(tables["floor_runs"])]
    return lines


def summary_markdown(results: Dict) -> str:
    from . import view  # the report's view of the same results; it uses this module's helpers

    env, settings = results["environment"], results["settings"]
    page = view.view(results)
    tables = page["tables"]
    # The answer first, in words; the figures it comes from follow.
    lines = ["# REST vs gRPC load-test results", ""] + ["- " + sentence for sentence in page["verdict"]] + (
        [""] if page["verdict"] else []) + [
        "%s, on %s." % (results.get("finished_at") or results.get("started_at"), machine_line(env)),
        "",
        load_sentence(settings) + " Everything runs on this one machine; CPU %% is of one core (%d cores = %d %%), "
        "CPU seconds cover exactly the measured run." % (env["cores"] or 0, (env["cores"] or 0) * 100)
        + repeats_sentence(settings.get("repeats", 1)) + replicas_sentence(settings.get("replicas", 1)),
        "",
    ] + ["- Stack **%s**: %s." % (entry["label"], view.stack_text(entry)) for entry in settings.get("stacks") or []] + [
        "",
        markdown(tables["runs"]),
        "## CPU and memory",
        "",
        "Per process: CPU as % of one core, and CPU seconds over the measured run. Per request and per call: the "
        "CPU of the services that served the path, together. Peak RSS in the order of the service columns.",
        "",
        markdown(tables["resources"]),
    ]
    if tables["payload"]:
        lines += ["## Payload shapes", "", "Each payload shape and path: req/s, the CPU per call of the services that "
                  "served it, and the bytes one call moved at the square service, request and response (TCP payload: "
                  "JSON and HTTP/1.1 or HTTP/2 over REST, protobuf and HTTP/2 over gRPC).", "",
                  markdown(tables["payload"])]
    if tables["network"]:
        profiles = page["network"]["profiles"]
        lines += ["## Networks", "", "Each path's req/s and p50 on each network (NETWORK), between the aggregator and "
                  "the square services:", ""] + ["- " + profile for profile in profiles] + [
                  "", markdown(tables["network"])]
    if tables["comparisons"]:
        lines += ["## Side by side", "", "Each pair of paths at the same n and setting: the first one's req/s and CPU "
                  "per downstream call, as a multiple of the second one's.", "", markdown(tables["comparisons"])]
    if tables["server_side"]:
        lines += [
            "## Server side",
            "",
            "The services' own metrics (`/actuator/prometheus`), read right before and right after each measured "
            "run. Aggregator: its successful requests and their mean time; the downstream calls (stream messages) "
            "it made and one's mean time as its client sees it, send to answer. Square service: the calls "
            "(messages) it served and its own mean processing time of one. On the streams that time (≤) is an "
            "upper bound: the server times whole streams, which include waiting for the client's next message. On "
            "the pipelined grpc/stream the client's time per message (≤) is the aggregator's time per request over "
            "n, also an upper bound: a message's own send-to-answer time there includes its wait behind the others.",
            "",
            markdown(tables["server_side"]),
        ]
    lines += floor_markdown(page["floor"], tables)
    if page["mix"]:
        lines += ["## Mixed traffic: each path beside the others vs alone", "", page["mix"]["how"], "",
                  markdown(page["mix"]["table"])]
    if page["soak"]:
        lines += ["## Soak", "", page["soak"]["how"], "", markdown(page["soak"]["flatness"]),
                  markdown(page["soak"]["minutes"])]
    troubled = [(run, problems(run)) for run in results["runs"] if problems(run)]
    if troubled:
        lines.append("**Runs whose figures cannot be trusted:**")
        lines.append("")
        lines += ["- %s: %s" % (run_name(run), "; ".join(found))
                  for run, found in troubled]
        lines.append("")
    return "\n".join(lines)


def load_sentence(settings: Dict) -> str:
    """How each run sent its load."""
    if settings.get("load") == "open":
        return ("Each run: `%s` (an open loop: requests leave on schedule whatever the answers; latency from each "
                "request's intended send time), after a discarded warm-up of %gs at the same rate; req/s is the "
                "goodput, correct answers per second." % (settings["vegeta_command"], settings["warmup_s"]))
    return ("Each run: `%s`, after a discarded warm-up of %gs at the same concurrency. ab speaks HTTP/1.0 without "
            "keep-alive (a new connection per request), as in the article." % (settings["ab_command"],
                                                                              settings["warmup_s"]))


def repeats_sentence(repeated: int) -> str:
    if repeated <= 1:
        return ""
    return (" Every combination ran %d times, interleaved; each figure is the median of its repeats, with their "
            "range for req/s and p99, and a run whose req/s spread ((max - min) / median) is above 10 %% is in bold."
            % repeated)


def replicas_sentence(replicas: int) -> str:
    """Said only when there is more than one: a service's CPU is then its replicas' together, its RSS the largest's."""
    if replicas <= 1:
        return ""
    return (" %d replicas of each square service: a square service's CPU is its replicas' added up, its peak RSS "
            "the largest replica's." % replicas)


def write_summary(results_dir: str, results: Dict) -> str:
    target = os.path.join(results_dir, "summary.md")
    with open(target, "w") as handle:
        handle.write(summary_markdown(results))
    return target


def machine_line(env: Dict) -> str:
    parts = [env.get("cpu_model") or "unknown CPU", "%s cores" % env.get("cores"),
             "%s GiB" % env.get("memory_gib"), env.get("os"), env.get("jdk"),
             env.get("load_generator") or env.get("ab")]
    return ", ".join(str(p) for p in parts if p)


def markdown_table(header: List[str], rows: List[List[str]]) -> str:
    """A Markdown table, which also reads well in a terminal."""
    return "\n".join("| " + " | ".join(row) + " |" for row in [header, ["---"] * len(header)] + rows) + "\n"
