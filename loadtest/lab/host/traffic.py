"""Bytes per call: what one square call (or stream message) puts on the wire between the aggregator and the square
service, request and response, measured at the square service over exactly the measured run.

The kernel counts the TCP payload of every connection (tcp_info: bytes_received, and bytes_acked of what was sent;
`ss -ti` shows them): HTTP headers, HTTP/2 and gRPC framing are in it, TCP/IP headers are not. The lab reads the
connections on the port each replica of the square service serves, right beside the CPU samples, and divides the
change by the square calls of the run. Nothing else the process does counts: not its logs, not its actuator on
another port, not the /proc files Micrometer reads.

Why not the process's I/O counters (/proc/<pid>/io rchar and wchar): they count read(2) and write(2) and their
vector forms, but not recv(2) and send(2). Tomcat reads its sockets with read, but Netty's native transport (the gRPC
service's) receives with recvfrom, so rchar misses most of what a gRPC service reads; and they count every file the
process reads too, such as the classes a JVM still loads from its jar.

A connection that closes during the run takes its counts with it: the aggregator keeps its connections to the
square services open, so none should (`connections_closed` says if one did). ab's connections to rest/square, the
baseline without the aggregator, each close after one request: that path is measured by rchar and wchar instead,
which there count Tomcat's reads and writes.
"""

import re
import subprocess
from typing import Any, Dict, Iterable, List, Optional, Tuple

from ..core.errors import TrafficError

# A connection, as ss names it: (local address:port, peer address:port).
Connection = Tuple[str, str]
# Its counters: (bytes received, bytes sent and acknowledged).
Counts = Tuple[int, int]

_ADDRESSES = re.compile(r"^\S+\s+\S+\s+(\S+)\s+(\S+)")
_COUNTER = re.compile(r"\b(bytes_received|bytes_acked):(\d+)")


def parse_connections(ss_output: str) -> Dict[Connection, Counts]:
    """Each connection's (bytes received, bytes acked) from `ss -tinH`: a line with the queues and both addresses,
    then a line of tcp_info, for each. A connection that has sent or received nothing yet shows no counter: 0."""
    found: Dict[Connection, Counts] = {}
    current: Optional[Connection] = None
    for line in ss_output.splitlines():
        if not line.strip():
            continue
        addresses = _ADDRESSES.match(line) if not line[0].isspace() else None
        if addresses:
            current = (addresses.group(1), addresses.group(2))
            found[current] = (0, 0)
            line = line[addresses.end() :]
        if current is None:
            continue
        counters = dict(_COUNTER.findall(line))
        if counters:
            received, acked = found[current]
            found[current] = (int(counters.get("bytes_received", received)), int(counters.get("bytes_acked", acked)))
    return found


def read_connections(ports: Iterable[int], namespace: Optional[str] = None) -> Dict[Connection, Counts]:
    """The established TCP connections whose local port is one of ports, with their counters, now: in the machine's
    network namespace, or in the named one (NETWORK=hosts: the square services')."""
    ports = list(ports)
    if not ports:
        return {}
    selector = "( %s )" % " or ".join("sport = :%d" % port for port in ports)
    try:
        done = subprocess.run(
            ["ss"] + (["-N", namespace] if namespace else []) + ["-tinH", "state", "established", selector],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise TrafficError("cannot run ss (iproute2): %s" % error) from None
    if done.returncode != 0:
        raise TrafficError("ss exited with code %d: %s" % (done.returncode, done.stderr.strip()))
    return parse_connections(done.stdout)


def connections_delta(before: Dict[Connection, Counts], after: Dict[Connection, Counts]) -> Dict:
    """Bytes received and sent over the window by the connections of two readings: a connection in both, its
    change; a new one, all of it (it opened within the window); one gone, nothing, and it is counted as closed."""
    received = sent = 0
    for connection, (got, gave) in after.items():
        start = before.get(connection, (0, 0))
        received += got - start[0]
        sent += gave - start[1]
    return {
        "received": received,
        "sent": sent,
        "connections": len(after),
        # Under TLS each is a handshake in the window (one that opened and closed within it is in neither reading).
        "connections_opened": len([c for c in after if c not in before]),
        "connections_closed": len([c for c in before if c not in after]),
    }


def per_call(received: int, sent: int, calls: int) -> Dict[str, Any]:
    """Bytes one call received (its request) and sent (its response), to a tenth of a byte."""
    if not calls:
        return {"request": None, "response": None}
    return {"request": round(received / calls, 1), "response": round(sent / calls, 1)}


def by_sockets(
    service: str, ports: List[int], before: Dict[Connection, Counts], after: Dict[Connection, Counts], calls: int
) -> Dict:
    """A run's bytes_per_call from its square service's connections over the run."""
    delta = connections_delta(before, after)
    record = per_call(delta["received"], delta["sent"], calls)
    record.update(
        service=service,
        method="tcp_info",
        square_calls=calls,
        connections=delta["connections"],
        connections_opened=delta["connections_opened"],
        connections_closed=delta["connections_closed"],
        how="TCP payload that %s's connections on port %s received (request) and sent (response) over the "
        "measured run, from the kernel's per-connection counters (tcp_info bytes_received and "
        "bytes_acked), per square call: HTTP headers, HTTP/2 and gRPC framing included, TCP/IP headers "
        "not" % (service, ", ".join(map(str, ports))),
    )
    return record


def totals(connections: Dict[Connection, Counts]) -> Dict[str, int]:
    """What a set of connections received and sent, all told."""
    return {
        "received": sum(got for got, _ in connections.values()),
        "sent": sum(gave for _, gave in connections.values()),
    }


def from_syscalls(service: str, before: Tuple[int, int], after: Tuple[int, int], calls: int) -> Dict:
    """A run's bytes_per_call from a service's (rchar, wchar) before and after the run (its replicas' added up): for
    rest/square, whose every connection closes in the run."""
    record = per_call(after[0] - before[0], after[1] - before[1], calls)
    record.update(
        service=service,
        method="rchar/wchar",
        square_calls=calls,
        how="bytes %s read (request) and wrote (response) with read(2) and write(2) over the measured run "
        "(/proc/<pid>/io rchar and wchar), per call: its sockets' TCP payload, HTTP headers included, "
        "and whatever else it read or wrote meanwhile (a log line, a file)" % service,
    )
    return record
