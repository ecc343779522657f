"""What a run's record in results.json says of itself, read the same way by the run, the check and the report: its
key and name, its path's CPU, its conditions (payload shape, network, stack) as older results had them, and why its
figures cannot be trusted."""

from typing import Dict, List, Set, Tuple

from .catalogue import AGGREGATOR, LOOPBACK, PROXY, SMALL, SQUARE_GRPC, SQUARE_REST

# The key a failed part carries instead of its figures: a run, its bytes_per_call, server_side or floor, a floor run.
ERROR = "error"

SERVICE_ORDER = (AGGREGATOR, SQUARE_REST, SQUARE_GRPC, PROXY)


def failed(record: Dict) -> bool:
    """Whether a part of results.json failed: a run, its bytes_per_call, server_side or floor, or a floor run, which
    then says why under ERROR instead of its figures."""
    return ERROR in record


def problems(run: Dict) -> List[str]:
    """Why a run's figures cannot be trusted as they stand; empty when they can."""
    if failed(run):
        return [run[ERROR]]
    found = []
    verified = run.get("verified")
    if not verified:
        found.append("the answer was not verified")
    elif isinstance(verified, dict) and verified.get("response_bytes") not in (None, verified.get("expected_bytes")):
        found.append(
            "responses of %s bytes where the expected answer has %s"
            % (verified["response_bytes"], verified["expected_bytes"])
        )
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
    """A run's stack, as lab.stage.stacks labels it ("tomcat · JDK 17"); empty in results from before REST_SERVER."""
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


def stacks_by_label(settings: Dict) -> Dict[str, Dict]:
    """A lab run's stacks (settings.stacks, as lab.stage.stacks records them) by label."""
    return {entry["label"]: entry for entry in settings.get("stacks") or []}


def stack_entry(run: Dict, settings: Dict) -> Dict:
    """The settings.stacks entry of a run's stack; {} in results from before REST_SERVER."""
    return stacks_by_label(settings).get(stack(run)) or {}


def stack_paths(settings: Dict) -> Dict[str, List[str]]:
    """The paths each stack measured: all of them on the first, the REST paths on one that only changed the server."""
    return {entry["label"]: entry["paths"] for entry in settings.get("stacks") or []} or {"": settings["paths"]}


def run_name(run: Dict) -> str:
    """A run's path and setting, as messages name it: rest/unary n=1000 c=100, or ... rate=50/s, with its payload
    shape and network when they are not small and loopback, and its stack: rest/unary n=20 c=1 payload=wide network=lan
    on netty · reactor-netty client · JDK 17."""
    setting = "rate=%d/s" % run["rate"] if run.get("load") == "open" else "c=%d" % run["concurrency"]
    conditions = "".join(
        " %s=%s" % (name, value)
        for name, value, default in (("payload", payload(run), SMALL), ("network", network(run), LOOPBACK))
        if value != default
    )
    conditions += " on " + stack(run) if stack(run) else ""
    return "%s n=%d %s%s" % (run["path"], run["n"], setting, conditions)


def path_cpu(run: Dict, field: str, with_proxy: bool = False) -> float:
    """CPU per request or per call of the services that served the run's path (an idle one's is not the path's), and
    with_proxy of Toxiproxy, which carried its calls on a network."""
    names = run["services"] + ([PROXY] if with_proxy else [])
    return sum((run["cpu"].get(name) or {}).get(field) or 0 for name in names)


def services_in(results: Dict) -> List[str]:
    """The services that ran, in the report's order."""
    present: Set[str] = set()
    for run in results["runs"]:
        present.update(name for name in run.get("cpu", {}) if name in SERVICE_ORDER)
    return [name for name in SERVICE_ORDER if name in present]
