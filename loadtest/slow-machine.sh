#!/usr/bin/env bash
# Runs a command on a slower machine made of this one: a CPU cgroup whose quota is PERCENT of one core (100: one
# core's worth, about half of a 2-core machine), on cgroup v2 (cpu.max) or v1 (cpu.cfs_quota_us), whichever the host
# mounts; the command and every process it starts stay inside, and the cgroup is removed when it ends. Needs root.
#   loadtest/slow-machine.sh 100 loadtest/run.sh
set -euo pipefail

usage() { echo "usage: loadtest/slow-machine.sh PERCENT COMMAND [ARGUMENTS...]   (PERCENT of one core, 10 to 10000)" >&2; exit 2; }
[[ $# -ge 2 && $1 =~ ^[0-9]+$ ]] || usage
percent=$1
shift
((percent >= 10 && percent <= 10000)) || usage
[[ $(id -u) == 0 ]] || { echo "[lab] ERROR: a CPU quota needs root (a cgroup of its own)" >&2; exit 1; }

period=100000
quota=$((period * percent / 100))
name="lab-slow-$$"
if [[ -f /sys/fs/cgroup/cgroup.controllers ]]; then
  # cgroup v2 alone: the cpu controller must be on for the new group's parent.
  group=/sys/fs/cgroup/$name
  grep -qw cpu /sys/fs/cgroup/cgroup.subtree_control || echo +cpu > /sys/fs/cgroup/cgroup.subtree_control
  mkdir "$group"
  echo "$quota $period" > "$group/cpu.max"
elif [[ -d /sys/fs/cgroup/cpu ]]; then
  group=/sys/fs/cgroup/cpu/$name
  mkdir "$group"
  echo "$period" > "$group/cpu.cfs_period_us"
  echo "$quota" > "$group/cpu.cfs_quota_us"
else
  echo "[lab] ERROR: no cgroup CPU controller mounted at /sys/fs/cgroup" >&2
  exit 1
fi

# Every process is out of the group before it is removed: a child may outlive the command for a moment. Run by the
# EXIT trap, which shellcheck does not follow.
# shellcheck disable=SC2317
remove() {
  local pids
  for _ in $(seq 50); do
    pids=$(cat "$group/cgroup.procs" 2>/dev/null || true)
    [[ -z $pids ]] && break
    sleep 0.1
  done
  rmdir "$group" 2>/dev/null || true
}
trap remove EXIT

echo "[lab] running on $percent % of one core (cgroup $group): $*" >&2
# A child in the group runs the command, so that this shell stays outside and can remove the group afterwards.
set +e
bash -c 'echo $$ > "$1/cgroup.procs"; shift; exec "$@"' quota "$group" "$@"
status=$?
set -e
exit "$status"
