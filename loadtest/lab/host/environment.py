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
