"""What machine and software produced the figures: numbers mean little without it."""

import os
import platform
import re
import subprocess
from typing import Dict, List, Optional


def describe(repo_dir: str, java: str, java_opts: str) -> Dict:
    jdk = _output([java, "-version"])
    return {
        "cpu_model": cpu_model(),
        "cores": os.cpu_count(),
        "cpu_quota_cores": cpu_quota_cores(),
        "memory_gib": memory_gib(),
        "os": os_name(),
        "kernel": platform.release(),
        "jdk": _first_line(jdk) or java,
        "jdk_detail": jdk,
        "java_opts": java_opts,
        "ab": ab_version(),
        "python": platform.python_version(),
        "git_commit": git_commit(repo_dir),
        "one_box": True,
    }


def cpu_model() -> Optional[str]:
    try:
        with open("/proc/cpuinfo") as handle:
            match = re.search(r"^model name\s*:\s*(.+)$", handle.read(), re.MULTILINE)
    except OSError:
        return None
    return match.group(1).strip() if match else platform.processor() or None


def cpu_quota_cores(cgroup_file: str = "/proc/self/cgroup", root: str = "/sys/fs/cgroup") -> Optional[float]:
    """The CPU quota the lab (and every process it starts) runs under, in cores: the tightest of its cgroup and the
    cgroups above it (v2 cpu.max, v1 cpu.cfs_quota_us over cpu.cfs_period_us), as a container's --cpus, a Kubernetes
    limit or slow-machine.sh set it; None when there is none. The machine's cores alone would overstate what ran."""
    try:
        with open(cgroup_file) as handle:
            lines = handle.read().splitlines()
    except OSError:
        return None
    found = []
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if controllers == "":
            found += [_v2_quota(os.path.join(root, folder)) for folder in _up_from(path)]
        elif "cpu" in controllers.split(","):
            mount = os.path.join(root, controllers)
            mount = mount if os.path.isdir(mount) else os.path.join(root, "cpu")
            found += [_v1_quota(os.path.join(mount, folder)) for folder in _up_from(path)]
    quotas = [quota for quota in found if quota is not None]
    return round(min(quotas), 2) if quotas else None


def _up_from(path: str) -> List[str]:
    """A cgroup's folder and each above it, up to the root, relative to the hierarchy's mount."""
    parts = [part for part in path.split("/") if part]
    return ["/".join(parts[:depth]) for depth in range(len(parts), -1, -1)]


def _v2_quota(folder: str) -> Optional[float]:
    words = _read(os.path.join(folder, "cpu.max")).split()
    return int(words[0]) / int(words[1]) if len(words) == 2 and words[0] != "max" else None


def _v1_quota(folder: str) -> Optional[float]:
    quota, period = _read(os.path.join(folder, "cpu.cfs_quota_us")), _read(os.path.join(folder, "cpu.cfs_period_us"))
    return int(quota) / int(period) if quota and period and int(quota) > 0 else None


def _read(path: str) -> str:
    try:
        with open(path) as handle:
            return handle.read().strip()
    except OSError:
        return ""


def memory_gib() -> Optional[float]:
    try:
        with open("/proc/meminfo") as handle:
            match = re.search(r"^MemTotal:\s+(\d+) kB", handle.read(), re.MULTILINE)
    except OSError:
        return None
    return round(int(match.group(1)) / 1024 / 1024, 1) if match else None


def os_name() -> str:
    try:
        with open("/etc/os-release") as handle:
            match = re.search(r'^PRETTY_NAME="?([^"\n]+)"?$', handle.read(), re.MULTILINE)
            if match:
                return match.group(1)
    except OSError:
        pass
    return platform.platform()


def ab_version() -> Optional[str]:
    """ab's own version, and the package it came in (ab prints no release of its own beyond 2.3)."""
    banner = _output(["ab", "-V"])
    match = re.search(r"Version (\S+)", banner or "")
    version = "ApacheBench " + match.group(1) if match else None
    package = _output(["dpkg-query", "-W", "-f", "${Version}", "apache2-utils"])
    if version and package:
        return "%s (apache2-utils %s)" % (version, package)
    return version


def git_commit(repo_dir: str) -> Optional[str]:
    """HEAD's commit, marked "-dirty" when the work tree has changes outside the results."""
    commit = _output(["git", "-C", repo_dir, "rev-parse", "HEAD"])
    if not commit:
        return None
    changes = _output(["git", "-C", repo_dir, "status", "--porcelain", "--untracked-files=no"])
    return commit + ("-dirty" if changes else "")


def _output(command: List[str]) -> Optional[str]:
    """What a command printed (stdout and stderr: java -version prints to stderr), or None."""
    try:
        done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def _first_line(text: Optional[str]) -> Optional[str]:
    return text.splitlines()[0] if text else None
