"""results.json, a contract other tools read: its writing and reading, and what each run in it says of itself.

Every key it holds is described in results.schema.json beside this module: a new key goes there, beside the code that
sets it, or the lab will not write it."""

import datetime
import functools
import json
import os
from typing import Dict, List, Optional, Set, Tuple

import jsonschema

from .catalogue import AGGREGATOR, LOOPBACK, SMALL, SQUARE_GRPC, SQUARE_REST
from .errors import ResultsError

# Every key results.json may hold, its type, and which a run must have: the contract, beside this module.
SCHEMA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results.schema.json")
RESULTS_JSON = "results.json"
# The other documents a run writes, and where the schema describes each.
DOCUMENTS = {RESULTS_JSON: "#", "faults.json": "#/$defs/faults", "clients.json": "#/$defs/clients"}
# The key a failed part carries instead of its figures: a run, its bytes_per_call, server_side or floor, a floor run.
ERROR = "error"

# Toxiproxy, between the aggregator and the square services on a NETWORK other than loopback, is a process of the run
# as the services are: its CPU is shown beside theirs, never in "other".
PROXY = "toxiproxy"
SERVICE_ORDER = (AGGREGATOR, SQUARE_REST, SQUARE_GRPC, PROXY)


def now() -> str:
    """The time as results files record it: local, with its offset, to the second."""
    return datetime.datetime.now().astimezone().isoformat(timespec="seconds")


def write_json(results_dir: str, results: Dict, name: str = RESULTS_JSON) -> str:
    """Writes results_dir/results.json (or name: faults.json, clients.json), the only way the lab writes them, once it
    holds to its schema; else ResultsError, naming each key that does not, and the file stays as it was."""
    # The document is checked as it will be read back: a tuple (a load average) is a JSON array there.
    text = json.dumps(results, indent=2)
    found = violations(json.loads(text), name)
    if found:
        raise ResultsError("%s would break its schema (%s):\n  %s" % (name, SCHEMA, "\n  ".join(found)))
    target = os.path.join(results_dir, name)
    # Written to a side file and renamed, so that a reader never sees half a file.
    with open(target + ".part", "w") as handle:
        handle.write(text + "\n")
    os.replace(target + ".part", target)
    return target


def read_json(results_dir: str) -> Dict:
    """results_dir/results.json as it is, for the check, the report and the floor; violations() says where it breaks
    the schema (a file from an older lab may, and is still read)."""
    target = os.path.join(results_dir, RESULTS_JSON)
    try:
        with open(target) as handle:
            data = json.load(handle)
    except OSError as error:
        raise ResultsError("cannot read %s: %s" % (target, error.strerror or error)) from None
    except ValueError as error:
        raise ResultsError("%s is not JSON: %s" % (target, error)) from None
    if not isinstance(data, dict):
        raise ResultsError("%s holds a %s, not a results object" % (target, type(data).__name__))
    return data


@functools.lru_cache(maxsize=1)
def schema() -> Dict:
    with open(SCHEMA) as handle:
        return json.load(handle)


@functools.lru_cache(maxsize=None)
def _validator(name: str) -> jsonschema.Draft202012Validator:
    described = DOCUMENTS[name]
    if described == "#":
        return jsonschema.Draft202012Validator(schema())
    return jsonschema.Draft202012Validator(
        {"$schema": schema()["$schema"], "$defs": schema()["$defs"], "$ref": described}
    )


def violations(data: Dict, name: str = RESULTS_JSON) -> List[str]:
    """Where data breaks results.schema.json (as the document name, one of DOCUMENTS), one line each, naming the key
    by its path (runs[2].latency_ms.p50); empty when it holds."""
    found = []
    errors = _validator(name).iter_errors(data)
    for error in sorted(errors, key=lambda error: [(isinstance(part, int), part) for part in error.absolute_path]):
        where = key_path(error.absolute_path)
        if error.validator == "required":
            # The message names the missing key ("'rps' is a required property"): said as the key's own path.
            missing = error.message.split("'")[1]
            found.append("%s: missing" % key_path(list(error.absolute_path) + [missing]))
        elif error.validator == "type":
            found.append("%s: %s is not of type %s" % (where, _short(error.instance), _types(error.validator_value)))
        else:
            found.append("%s: %s" % (where, error.message))
    return found


def key_path(parts) -> str:
    """A key's place in results.json as one string: runs[2].latency_ms.p50 ("(top)" for the whole document)."""
    text = ""
    for part in parts:
        text += "[%d]" % part if isinstance(part, int) else ("." if text else "") + str(part)
    return text or "(top)"


def _short(value) -> str:
    text = json.dumps(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _types(expected) -> str:
    return " or ".join(expected) if isinstance(expected, list) else expected


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


def stacks_by_label(settings: Dict) -> Dict[str, Dict]:
    """A lab run's stacks (settings.stacks, as lab.stacks records them) by label."""
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


def markdown_table(header: List[str], rows: List[List[str]]) -> str:
    """A Markdown table, which also reads well in a terminal."""
    return "\n".join("| " + " | ".join(row) + " |" for row in [header, ["---"] * len(header)] + rows) + "\n"
