"""Two hosts on this machine (NETWORK=hosts): the square services in a network namespace of their own, joined to the
aggregator's (the lab's own, the machine's) by a veth pair. Their calls then cross a real kernel network path, two
network stacks and a virtual link, with no proxy's CPU in it: the baseline that the simulated networks, which add
Toxiproxy's, are compared with, and what "another host" costs before any wire does.

A namespace needs root (CAP_NET_ADMIN) and iproute2's `ip`; where either is missing the lab says so. The namespace and
its veth pair live exactly as long as the run: deleting the namespace deletes the pair, whatever ended the run. The
processes started in it (`ip netns exec NAME java ...`, which execs java) keep their PIDs in the machine's /proc, so
the lab reads their CPU and memory as it reads every other service's.
"""

import contextlib
import os
import shutil
import subprocess
from dataclasses import dataclass
from typing import Iterator, List, Optional

from ..core.errors import LabError

# The namespaces the lab makes begin with it (one per run, named after the lab's PID).
PREFIX = "lab-hosts-"
# A /30 of its own per run, from a private range unlikely to be routed here: 10.213.<pid % 64 * 4>.0/30 leaves room
# for 64 runs at once.
SUBNET = "10.213"


@dataclass(frozen=True)
class Hosts:
    """The square services' namespace and the two ends of the link: the machine's address and theirs."""

    namespace: str
    # The veth's end in the machine's namespace, and in the square services'.
    outside: str
    inside: str
    machine_address: str
    squares_address: str

    def command(self, command: List[str]) -> List[str]:
        """A command as it runs in the square services' namespace."""
        return ["ip", "netns", "exec", self.namespace] + command


def _ip(*arguments: str) -> None:
    done = subprocess.run(["ip", *arguments], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=30)
    if done.returncode != 0:
        raise LabError("NETWORK=hosts: `ip %s` failed: %s" % (" ".join(arguments), done.stdout.strip()))


def available() -> Optional[str]:
    """Why this machine cannot have a second host, or None when it can."""
    if shutil.which("ip") is None:
        return "NETWORK=hosts needs iproute2's ip (Debian: apt-get install -y iproute2)"
    if os.geteuid() != 0:
        return (
            "NETWORK=hosts puts the square services in a network namespace of their own, which needs root "
            "(CAP_NET_ADMIN): run the lab as root, or measure the other networks"
        )
    return None


@contextlib.contextmanager
def joined(needed: bool, pid: Optional[int] = None) -> Iterator[Optional[Hosts]]:
    """The square services' namespace and its link while the run lasts (None when no network needs it)."""
    if not needed:
        yield None
        return
    missing = available()
    if missing:
        raise LabError(missing)
    pid = os.getpid() if pid is None else pid
    block = pid % 64 * 4
    hosts = Hosts(
        namespace=PREFIX + str(pid),
        # Interface names are at most 15 characters.
        outside="lhm%d" % pid,
        inside="lhs%d" % pid,
        machine_address="%s.%d.1" % (SUBNET, block),
        squares_address="%s.%d.2" % (SUBNET, block),
    )
    _ip("netns", "add", hosts.namespace)
    try:
        _ip("link", "add", hosts.outside, "type", "veth", "peer", "name", hosts.inside)
        _ip("link", "set", hosts.inside, "netns", hosts.namespace)
        _ip("addr", "add", hosts.machine_address + "/30", "dev", hosts.outside)
        _ip("link", "set", hosts.outside, "up")
        inside = ["-n", hosts.namespace]
        _ip(*inside, "addr", "add", hosts.squares_address + "/30", "dev", hosts.inside)
        _ip(*inside, "link", "set", hosts.inside, "up")
        _ip(*inside, "link", "set", "lo", "up")
        yield hosts
    finally:
        # The pair goes with the namespace; its outside end too, should the namespace never have had it.
        subprocess.run(["ip", "netns", "del", hosts.namespace], capture_output=True, timeout=30)
        subprocess.run(["ip", "link", "del", hosts.outside], capture_output=True, timeout=30)
