"""TLS against plaintext (TLS): each path's run in a TLS mode beside the same path's run on the same stack in
plaintext, with the same payload, network, n and concurrency: req/s and CPU per call, each with its ratio to
plaintext, the handshakes in the measured window, and what encrypted each side. The report's table and its chart of
CPU per call by mode come from here; lab/results/view.py gathers them.
"""

import dataclasses
from typing import Callable, Dict, List, Optional

from ..core import catalogue, records, windows
from ..core.records import path_cpu


def plaintext_of(entry: Dict, stacks: Dict[str, Dict]) -> Optional[str]:
    """The label of the stack that is this one in plaintext, if the run measured it."""
    same = ("rest_server", "rest_client", "java", "virtual_threads")
    for label, other in stacks.items():
        if other.get("tls", catalogue.PLAINTEXT) == catalogue.PLAINTEXT and all(
            other.get(key) == entry.get(key) for key in same
        ):
            return label
    return None


def pairs(data: Dict) -> List[tuple]:
    """(TLS run, its plaintext run, the TLS stack's entry) for every TLS run whose plaintext twin was measured."""
    stacks = records.stacks_by_label(data["settings"])
    by_key: Dict[tuple, Dict] = {records.key(run): run for run in data["runs"] if "error" not in run}
    found = []
    for (stack, net, path, shape, n, point), run in by_key.items():
        entry = stacks.get(stack) or {}
        if entry.get("tls", catalogue.PLAINTEXT) == catalogue.PLAINTEXT:
            continue
        twin = by_key.get((plaintext_of(entry, stacks), net, path, shape, n, point))
        if twin is not None and twin.get("rps"):
            found.append((run, twin, entry))
    return found


def providers(entry: Dict, path: str) -> str:
    """What encrypted a path's two sides: "aggregator JDK (SunJSSE) · square OpenSSL (BoringSSL)"."""
    details = entry.get("tls_details") or {}
    transport = catalogue.transport_of(path)
    client = ((details.get("aggregator") or {}).get("providers") or {}).get(transport)
    server = ((details.get("squares") or {}).get(transport) or {}).get("provider")
    return "aggregator %s · square %s" % (client or "?", server or "?")


def negotiated(entry: Dict, path: str) -> str:
    """What the square service negotiated with the lab's handshake: "TLSv1.3 · TLS_AES_128_GCM_SHA256 · h2"."""
    found = ((entry.get("tls_details") or {}).get("squares") or {}).get(catalogue.transport_of(path)) or {}
    if "error" in found or not found:
        return found.get("error") or "–"
    return " · ".join(str(found.get(key) or "–") for key in ("protocol", "cipher", "alpn"))


def table(measured: List[tuple], fmt: Callable, conditions_of: Callable, shown: List[str]) -> Optional[Dict]:
    """Per path and TLS mode, from pairs(data): req/s and CPU per call beside plaintext's and their ratios, handshakes
    in the window, the providers of both sides and what was negotiated; None without a TLS run. The conditions shown
    are the payload and network where the run has several, and the plaintext stack where TLS ran on more than one."""
    if not measured:
        return None
    several = len({records.stack(twin) for _, twin, _ in measured}) > 1
    others = [name for name in shown if name != "stack"]
    rows = []
    for run, twin, entry in measured:
        cpu, plain_cpu = path_cpu(run, "us_per_call"), path_cpu(twin, "us_per_call")
        handshakes = (run.get("bytes_per_call") or {}).get("connections_opened")
        rows.append(
            {
                "cells": [run["path"], catalogue.TLS_NAMES[entry["tls"]]]
                + ([records.stack(twin)] if several else [])
                + conditions_of(run, others)
                + [
                    str(run["n"]),
                    str(records.point(run)),
                    *_against_plaintext(fmt, twin["rps"], run["rps"], plain_cpu, cpu, 1),
                    "–" if handshakes is None else str(handshakes),
                    providers(entry, run["path"]),
                    negotiated(entry, run["path"]),
                ],
                "swatch": run["path"],
            }
        )
    open_loop = any(run.get("load") == "open" for run, _, _ in measured)
    return {
        "heads": ["path", "TLS"]
        + (["stack"] if several else [])
        + others
        + [
            "n",
            "rate (/s)" if open_loop else "concurrency",
            "req/s: plaintext → TLS",
            "req/s ratio",
            "CPU per call: plaintext → TLS",
            "CPU per call ratio",
            "handshakes, all repeats (at least)",
            "providers",
            "negotiated (protocol · cipher · ALPN)",
        ],
        "rows": rows,
    }


def chart(data: Dict, measured: List[tuple]) -> Optional[Dict]:
    """CPU per call of each path in each TLS mode, on the first pair's (from pairs(data)) server and client, network,
    payload shape, n and concurrency: {"paths", "modes": [{"mode", "label", "values"}]}; None without a TLS run."""
    if not measured:
        return None
    plain_stack, net, _, shape, n, point = records.key(measured[0][1])
    stacks = records.stacks_by_label(data["settings"])
    by_key: Dict[tuple, Dict] = {records.key(run): run for run in data["runs"] if "error" not in run}
    paths = [path for path in data["settings"]["paths"] if catalogue.ALL[path].target == catalogue.AGGREGATOR]
    modes = []
    for label, entry in stacks.items():
        if label != plain_stack and plaintext_of(entry, stacks) != plain_stack:
            continue
        values = []
        for path in paths:
            run = by_key.get((label, net, path, shape, n, point))
            values.append(round(path_cpu(run, "us_per_call"), 1) if run else None)
        mode = entry.get("tls", catalogue.PLAINTEXT)
        modes.append({"mode": mode, "label": catalogue.TLS_NAMES[mode], "values": values})
    return {"paths": paths, "modes": modes}


def floor_table(data: Dict, fmt: Callable) -> Optional[Dict]:
    """The floor in each TLS mode beside the floor in plaintext, window by window: the bare transports' calls/s and
    CPU per call with their ratios, what encrypted each side and what the client's handshake agreed; None without a
    TLS floor run."""
    runs = [run for run in (data.get("floor") or {}).get("runs", []) if "error" not in run]
    by_window = {windows.Window.from_record(run["transport"], run["window"]): run for run in runs}
    rows = []
    for window, run in by_window.items():
        plain = dataclasses.replace(window, tls=None)
        twin = by_window.get(plain)
        if window.tls is None or twin is None or not twin.get("calls_per_second"):
            continue
        said = run.get("tls") or {}
        rows.append(
            {
                "cells": [
                    window.transport,
                    catalogue.TLS_NAMES[window.tls],
                    plain.describe(),
                    *_against_plaintext(
                        fmt,
                        twin["calls_per_second"],
                        run["calls_per_second"],
                        windows.cpu_us_per_call(twin),
                        windows.cpu_us_per_call(run),
                        0,
                    ),
                    "client %s · server %s" % (said.get("client_provider") or "?", said.get("server_provider") or "?"),
                    " · ".join(str(said.get(key) or "–") for key in ("protocol", "cipher", "alpn")),
                ]
            }
        )
    if not rows:
        return None
    return {
        "heads": [
            "floor transport",
            "TLS",
            "window",
            "calls/s: plaintext → TLS",
            "calls/s ratio",
            "CPU per call: plaintext → TLS",
            "CPU per call ratio",
            "providers",
            "negotiated (protocol · cipher · ALPN)",
        ],
        "rows": rows,
    }


def _against_plaintext(
    fmt: Callable, plain_rate: float, rate: float, plain_cpu: Optional[float], cpu: Optional[float], digits: int
) -> List[str]:
    """The four cells of a TLS row: its rate beside plaintext's ("a → b"), their ratio, and the same of CPU per call
    ("–" where either side has none)."""
    return [
        "%s → %s" % (fmt(plain_rate, digits), fmt(rate, digits)),
        fmt(rate / plain_rate, 2) + "×",
        "%s → %s µs" % (fmt(plain_cpu, 1), fmt(cpu, 1)) if cpu and plain_cpu else "–",
        fmt(cpu / plain_cpu, 2) + "×" if cpu and plain_cpu else "–",
    ]
