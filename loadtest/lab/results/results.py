"""results.json, a contract other tools read: its writing and reading, and what each run in it says of itself.

Every key it holds is described in results.schema.json beside this module: a new key goes there, beside the code that
sets it, or the lab will not write it."""

import datetime
import functools
import json
import os
from typing import Dict, List, Optional

import jsonschema

from ..core.errors import ResultsError

# Every key results.json may hold, its type, and which a run must have: the contract, beside this module.
SCHEMA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results.schema.json")
RESULTS_JSON = "results.json"
# The other documents a run writes, and where the schema describes each.
DOCUMENTS = {RESULTS_JSON: "#", "faults.json": "#/$defs/faults", "clients.json": "#/$defs/clients"}
DOCUMENTS.update((name + ".json", "#/$defs/" + name) for name in ("overload", "design", "article", "profile"))
# What went wrong with a run as a whole: a list of {"what", "at"}, which the summary and the report state first.
FAILURES = "failures"
# How a failure says the document broke its schema (the writer replaces it at each write).
SCHEMA_BREACH = "the lab's own results broke their schema (lab/results/results.schema.json), kept as they are"


def now() -> str:
    """The time as results files record it: local, with its offset, to the second."""
    return datetime.datetime.now().astimezone().isoformat(timespec="seconds")


def write_json(results_dir: str, results: Dict, name: str = RESULTS_JSON) -> List[str]:
    """Writes results_dir/results.json (or name: faults.json, clients.json), the only way the lab writes them, whatever
    they hold: minutes of measuring are never lost to a bookkeeping error. Where the document breaks its schema, it
    says so first, among its failures (and the check fails it); returns those breaches, empty when it holds."""
    # The document is checked as it will be read back: a tuple (a load average) is a JSON array there.
    found = violations(json.loads(json.dumps(results)), name)
    kept = [failure for failure in results.get(FAILURES) or [] if not failure["what"].startswith(SCHEMA_BREACH)]
    if found:
        kept.insert(0, {"what": "%s (%s):\n  %s" % (SCHEMA_BREACH, name, "\n  ".join(found)), "at": now()})
    if kept or FAILURES in results:
        results[FAILURES] = kept
    target = os.path.join(results_dir, name)
    # Written to a side file and renamed, so that a reader never sees half a file.
    with open(target + ".part", "w") as handle:
        handle.write(json.dumps(results, indent=2) + "\n")
    os.replace(target + ".part", target)
    return found


def add_failure(results: Dict, what: str) -> None:
    """Records why a run did not finish as it should (stopped, a service lost, its check failed): the summary and the
    report say it first."""
    results.setdefault(FAILURES, []).append({"what": what, "at": now()})


def failures(results: Dict) -> List[str]:
    """What went wrong with a run as a whole, in the order it happened; empty for a clean run."""
    return [failure["what"] for failure in results.get(FAILURES) or []]


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


def markdown(table: Optional[Dict]) -> str:
    """One of the report's tables (lab.results.view computes them, once) as Markdown, which also reads well in a
    terminal;
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
