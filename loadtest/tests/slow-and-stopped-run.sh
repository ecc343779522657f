#!/usr/bin/env bash
# A lab that holds on a slow machine and never throws away what it measured, end to end, as the Maven build runs it:
#  1. a small run on one core's worth of this machine (loadtest/slow-machine.sh), where one round of rest/unary's
#     requests outlasts a part: it must finish (exit 0, checked, a report), each repeat's parts and rounds recorded
#     and the report saying which figures are less certain and why;
#  2. a run stopped with SIGTERM while it measures: exit 143, every process it started stopped, results.json kept
#     with the failure said first, and `run.sh --report` rendering its folder again.
#
#   loadtest/tests/slow-and-stopped-run.sh RESULTS_DIR [slow] [stopped]
#     results in RESULTS_DIR/slow and RESULTS_DIR/stopped; both parts unless some are named. The build runs `stopped`:
#     the slow part still fails now and then on one core (a response of the wrong length, 1 in 300: issue #45).
set -euo pipefail

LAB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
readonly LAB_DIR
results=${1:?usage: loadtest/tests/slow-and-stopped-run.sh RESULTS_DIR [slow] [stopped]}
shift
parts=${*:-slow stopped}
mkdir -p "$results"
results=$(cd "$results" && pwd)
readonly results
python=$("$LAB_DIR/python-env.sh")

fail() { echo "slow-and-stopped-run: FAIL: $*" >&2; exit 1; }

slow_part() {
# 1. One core: rest/unary at 100 requests of 200 squares takes a round of about 7 s, more than a part of 5 s (at 1000
#    squares a request waits longer than its share of the deadline there, and half are shed: docs/overload.md).
REQUESTS='' DURATION=10 CONCURRENCY=100 N=200 REPEATS=2 WARMUP_SECONDS=2 PATHS="rest/unary grpc/stream" \
  FLOOR=1 FLOOR_WARMUP=1 FLOOR_DURATION=2 RESULTS_DIR="$results/slow" LAB_SKIP_BUILD=1 \
  "$LAB_DIR/slow-machine.sh" 100 "$LAB_DIR/run.sh" || fail "the run on one core did not finish with exit 0"
"$python" - "$results/slow" <<'PYTHON' || fail "the run on one core did not record or report its parts"
import json, os, sys
folder = sys.argv[1]
data = json.load(open(os.path.join(folder, "results.json")))
rest = next(run for run in data["runs"] if run["path"] == "rest/unary")
parts = [repeat["parts"] for repeat in rest["repeats"]]
assert all(isinstance(count, int) for count in parts), parts
assert all(repeat.get("rounds", 0) >= 1 for repeat in rest["repeats"]), rest["repeats"]
summary = open(os.path.join(folder, "summary.md")).read()
report = open(os.path.join(folder, "report.html")).read()
assert data["environment"]["cpu_quota_cores"] == 1.0, data["environment"].get("cpu_quota_cores")
assert "limited to 1 core by a CPU quota" in summary and "limited to 1 core by a CPU quota" in report, "no word of the quota"
if min(parts) < data["settings"]["parts"]:
    assert "part(s) of" in summary and "part(s) of" in report, "no word of the parts a round outlasted"
print("slow run: rest/unary's repeats in %s part(s) of %s round(s)" % (parts, [r["rounds"] for r in rest["repeats"]]))
PYTHON
(cd "$LAB_DIR" && "$python" -m lab check "$results/slow" >/dev/null) || fail "the run on one core fails its check"
}

stopped_part() {
# 2. Stopped with SIGTERM once it measures its first round; its folder reported again afterwards.
log="$results/stopped.log"
REQUESTS=200 CONCURRENCY=5 N=50 REPEATS=3 WARMUP_SECONDS=1 PATHS="rest/unary grpc/unary" FLOOR=0 \
  RESULTS_DIR="$results/stopped" LAB_SKIP_BUILD=1 "$LAB_DIR/run.sh" >"$log" 2>&1 &
lab=$!
for _ in $(seq 600); do
  grep -q "round 2/3" "$log" && break
  kill -0 "$lab" 2>/dev/null || fail "the lab ended before its second round (see $log)"
  sleep 0.2
done
# run.sh execs the lab's python: the job is the lab itself.
kill -TERM "$lab"
status=0
wait "$lab" || status=$?
[[ $status == 143 ]] || fail "a lab stopped with SIGTERM exited $status, not 143 (see $log)"
for port in 8080 7575 6565; do
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    fail "port $port still answers: a service the stopped lab started is still running"
  fi
done
"$python" - "$results/stopped" <<'PYTHON' || fail "the stopped run did not keep and report what it measured"
import json, os, sys
folder = sys.argv[1]
data = json.load(open(os.path.join(folder, "results.json")))
assert data["failures"][0]["what"].startswith("the lab was stopped by SIGTERM during measuring"), data["failures"]
assert data["runs"], "no repeat kept"
summary = open(os.path.join(folder, "summary.md")).read().splitlines()
assert summary[2] == "**This run did not finish as it should:**", summary[:5]
print("stopped run: %d runs kept; %s" % (len(data["runs"]), data["failures"][0]["what"]))
PYTHON
rm "$results/stopped/report.html"
"$LAB_DIR/run.sh" --report "$results/stopped" >/dev/null || fail "run.sh --report could not render the stopped run"
grep -q "This run did not finish as it should" "$results/stopped/report.html" || fail "the rendered report hides the failure"
}

for part in $parts; do
  case $part in
    slow) slow_part ;;
    stopped) stopped_part ;;
    *) fail "unknown part '$part'; the parts are: slow stopped" ;;
  esac
done
echo "slow-and-stopped-run: OK"
