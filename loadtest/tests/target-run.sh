#!/usr/bin/env bash
# TARGET mode end to end, as the Maven build runs it: the three services started the way a user starts them on
# their own hosts (java @jvm.options -jar, from the packaged jars) on other ports than the lab's, then the lab in
# TARGET mode twice: reading each service's CPU and memory from its own /actuator/prometheus, and from a real
# Prometheus scraping them (TARGET_PROMETHEUS); each run checked as every lab run is. Everything it started stops
# on the way out, whatever ends it.
#
#   loadtest/tests/target-run.sh RESULTS_DIR     results in RESULTS_DIR/actuator and RESULTS_DIR/prometheus
set -euo pipefail

readonly AGGREGATOR_PORT=18080 SQUARE_REST_PORT=17575 SQUARE_GRPC_PORT=16565 SQUARE_GRPC_ACTUATOR_PORT=16566
readonly PROMETHEUS_PORT=19090 HEALTH_TIMEOUT_SECONDS=180

LAB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
REPO=$(dirname "$LAB_DIR")
readonly LAB_DIR REPO
results=${1:?usage: loadtest/tests/target-run.sh RESULTS_DIR}
mkdir -p "$results/logs"
results=$(cd "$results" && pwd)
readonly results

pids=()
prometheus_pid_file="$results/logs/prometheus.pid"

stop_everything() {
  if [[ -f $prometheus_pid_file ]]; then
    bash "$REPO/monitoring/run-prometheus.sh" --stop --pid-file "$prometheus_pid_file" || true
  fi
  if ((${#pids[@]})); then
    kill "${pids[@]}" 2>/dev/null || true
    wait "${pids[@]}" 2>/dev/null || true
  fi
}
trap stop_everything EXIT

# One service, started from its own folder as its README says, with its log in the results.
start() {
  local module=$1
  shift
  # In a session of its own, as the lab starts its own services: the kernel's autogroups share CPU between sessions.
  (cd "$REPO/$module" && exec setsid java @../jvm.options -jar "target/$module-1.0.0-SNAPSHOT.jar" "$@") \
    >"$results/logs/$module.log" 2>&1 &
  pids+=("$!")
}

# A port something already listens on (services a killed build left behind: setsid takes them out of its process
# group) would answer the health checks and be measured in place of the services this run starts.
refuse_taken() {
  local port
  for port in "$@"; do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "target-run: port $port is already in use on 127.0.0.1: stop what listens there first" >&2
      exit 1
    fi
  done
}

healthy() {
  local url=$1 deadline=$((SECONDS + HEALTH_TIMEOUT_SECONDS))
  until curl -sf --max-time 5 "$url" | grep -q '"status":"UP"'; do
    if ((SECONDS > deadline)); then
      echo "target-run: $url did not answer UP within ${HEALTH_TIMEOUT_SECONDS}s (logs in $results/logs)" >&2
      exit 1
    fi
    sleep 1
  done
}

refuse_taken $SQUARE_REST_PORT $SQUARE_GRPC_PORT $SQUARE_GRPC_ACTUATOR_PORT $AGGREGATOR_PORT $PROMETHEUS_PORT
start square-rest-service --server.port=$SQUARE_REST_PORT
start square-grpc-service --server.port=$SQUARE_GRPC_ACTUATOR_PORT --grpc.server.port=$SQUARE_GRPC_PORT
start aggregator-service --server.port=$AGGREGATOR_PORT \
  --aggregator.rest.base-url=http://127.0.0.1:$SQUARE_REST_PORT \
  --aggregator.grpc.target=127.0.0.1:$SQUARE_GRPC_PORT
for port in $SQUARE_REST_PORT $SQUARE_GRPC_ACTUATOR_PORT $AGGREGATOR_PORT; do
  healthy "http://127.0.0.1:$port/actuator/health"
done
for pid in "${pids[@]}"; do
  kill -0 "$pid" 2>/dev/null || {
    echo "target-run: a service exited after starting (logs in $results/logs)" >&2
    exit 1
  }
done

lab() {
  local name=$1
  shift
  env "$@" TARGET=http://127.0.0.1:$AGGREGATOR_PORT PATHS="rest/unary grpc/unary" N=20 CONCURRENCY=4 REPEATS=1 \
    WARMUP_SECONDS=1 LAB_SKIP_BUILD=1 RESULTS_DIR="$results/$name" bash "$LAB_DIR/run.sh"
  (cd "$LAB_DIR" && .venv/bin/python -m lab check "$results/$name")
}

# Each service's own counters, read right around each window.
lab actuator REQUESTS=200

# A real Prometheus scraping them every 5 s: windows of 12 s hold at least two scrapes.
AGGREGATOR_ADDRESS=127.0.0.1:$AGGREGATOR_PORT SQUARE_REST_ADDRESS=127.0.0.1:$SQUARE_REST_PORT \
  SQUARE_GRPC_ACTUATOR_ADDRESS=127.0.0.1:$SQUARE_GRPC_ACTUATOR_PORT \
  bash "$REPO/monitoring/run-prometheus.sh" --background --port $PROMETHEUS_PORT --pid-file "$prometheus_pid_file"
lab prometheus DURATION=12 TARGET_PROMETHEUS=http://127.0.0.1:$PROMETHEUS_PORT
