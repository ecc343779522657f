#!/usr/bin/env bash
# The load-test lab, in one command: builds the jars when they are missing or stale, makes sure ApacheBench
# is there, starts the services on loopback, checks every path's answer, measures each path with ab (after
# a discarded warm-up) while sampling CPU and memory from /proc, stops everything it started (also on
# failure or Ctrl-C), then runs the bare transports' floor (transport-floor/run-floor.sh) with the window the
# aggregator had, on the machine the services no longer share, and writes results.json, summary.md, report.html,
# the raw ab output and the floor's runs.
#
# The shell part starts and stops processes; the measuring is the Python package in loadtest/lab.
set -euo pipefail

LAB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT_DIR=$(cd "$LAB_DIR/.." && pwd)

usage() {
  cat <<'EOF'
Usage: loadtest/run.sh              measure every path, write the results folder
       loadtest/run.sh --report DIR  (re)write DIR/report.html from DIR/results.json
       loadtest/run.sh --help        this text

Knobs are environment variables (defaults replicate the article's `ab -n 1000 -c 100`):
  REQUESTS      requests per measured ab run                           1000
  CONCURRENCY   concurrent ab clients; a space-separated list sweeps   100
  N             squares per request; a space-separated list sweeps     1000
  PATHS         paths to measure (also: rest/square, a baseline)       "rest/unary grpc/unary grpc/stream"
  WARMUP        warm-up requests before each measured run, discarded   100  (0: none)
  AB_TIMEOUT    seconds ab waits for one response                      120
  RESULTS_DIR   where the results go                                   loadtest/results/<timestamp>
  JAVA_OPTS     JVM options of every service            -XX:+UseSerialGC -Xms128m -Xmx128m -Xss512k -XX:+ExitOnOutOfMemoryError
  AGGREGATOR_ARGS  extra Spring arguments for the aggregator, e.g. --aggregator.in-flight=64
                (the lab sets --aggregator.deadline=<AB_TIMEOUT>s unless this sets it)
  AGGREGATOR_PORT, SQUARE_REST_PORT, SQUARE_GRPC_PORT, SQUARE_GRPC_ACTUATOR_PORT   8080, 7575, 6565, 6566
  REPLICAS      replicas of each square service; the aggregator spreads its calls over all of them
                (replica r on the port + r - 1 for REST, + 2(r - 1) for gRPC and its actuator)  1
  HEALTH_TIMEOUT   seconds to wait for the services to become healthy  180
  LAB_SKIP_BUILD=1 never run Maven (the Maven build sets it: the jars are fresh there)
  PROMETHEUS=1  also run a real Prometheus beside the lab (monitoring/run-prometheus.sh), scraping the
                services every 5s, to browse their metrics live while the lab runs; stopped at the end  0
  PROMETHEUS_PORT  its port on 127.0.0.1                               9090
  FLOOR         1: after the paths, with the services stopped, run the bare transports with no Spring on
                the path (transport-floor/run-floor.sh), one run per distinct window the aggregator had, with
                JAVA_OPTS; the report then shows each path's fraction of its floor (goal: 60 %). 0: skip it  1
  FLOOR_DURATION, FLOOR_WARMUP   passed to the floor: how long each floor run measures, and warms up first
                (e.g. 2s, 500ms, 1m)                                   the floor's defaults

Every run also reads each service's /actuator/prometheus right before and right after the measured ab run
(no Prometheus needed): results.json's server_side, and the "Server side" table of summary.md.

The floor's window per measured run: http, min(aggregator.rest.max-connections, CONCURRENCY x min(N, in-flight))
connections; grpc-unary, CONCURRENCY x min(N, aggregator.in-flight) calls in flight; grpc-stream, CONCURRENCY
streams of N messages (in-flight 8 and max-connections 64 unless AGGREGATOR_ARGS sets them). rest/square has
none. A floor run that fails fails the lab, once the results folder (with the paths' figures) is written.

Example sweep: CONCURRENCY="1 8 64" N="10 100" REQUESTS=200 loadtest/run.sh
EOF
}

: "${JAVA_OPTS=-XX:+UseSerialGC -Xms128m -Xmx128m -Xss512k -XX:+ExitOnOutOfMemoryError}"
: "${AGGREGATOR_ARGS=}"
: "${AGGREGATOR_PORT:=8080}" "${SQUARE_REST_PORT:=7575}" "${SQUARE_GRPC_PORT:=6565}" "${SQUARE_GRPC_ACTUATOR_PORT:=6566}"
: "${HEALTH_TIMEOUT:=180}"
: "${LAB_SKIP_BUILD:=0}"
: "${PROMETHEUS:=0}" "${PROMETHEUS_PORT:=9090}"
: "${FLOOR:=1}"
JAVA=${JAVA_HOME:+$JAVA_HOME/bin/}java

SERVICE_PIDS=()   # every service process this script started, stopped by cleanup
LAB_STEP_PID=     # the Python process that measures the paths, or runs the floor, while it runs
PROMETHEUS_PID_FILE=  # set while the Prometheus this script started (PROMETHEUS=1) runs
PROMETHEUS_URL=

say() { printf '[lab] %s\n' "$*"; }
die() { printf '[lab] ERROR: %s\n' "$*" >&2; exit 1; }
LAB_PYTHONPATH="$LAB_DIR${PYTHONPATH:+:$PYTHONPATH}"
LAB_PYTHON=   # loadtest/.venv's python, with the lab's pinned packages (python-env.sh)
lab() { PYTHONPATH="$LAB_PYTHONPATH" "$LAB_PYTHON" -m lab "$@"; }

require_tools() {
  command -v python3 >/dev/null || die "python3 is missing: install Python 3.8 or newer (Debian: apt-get install -y python3)"
  python3 -c 'import sys; sys.exit(sys.version_info < (3, 8))' || die "python3 is older than 3.8: $(python3 --version 2>&1)"
  LAB_PYTHON=$("$LAB_DIR/python-env.sh") || die "the lab's Python packages could not be installed (see above)"
  command -v "$JAVA" >/dev/null || die "java is missing: install a JDK 17 or newer (Debian: apt-get install -y openjdk-17-jdk-headless)"
}

# The executable jar of a module: the newest <module>-<version>.jar in its target folder.
jar_of() {
  local module=$1 candidate jar=
  for candidate in "$ROOT_DIR/$module/target/$module"-*.jar; do
    [[ -f $candidate && $candidate != *-plain.jar && $candidate != *-sources.jar ]] || continue
    if [[ -z $jar || $candidate -nt $jar ]]; then jar=$candidate; fi
  done
  printf '%s' "$jar"
}

# True when a source the module's jar is built from changed after the jar was. Only sources count: Maven
# leaves a jar untouched when a pom changed but the classes did not, so a pom newer than the jar proves nothing.
sources_newer_than() {
  local module=$1 jar=$2
  [[ -n $(find "$ROOT_DIR/$module/src" "$ROOT_DIR/proto-module/src" -newer "$jar" -print -quit 2>/dev/null) ]]
}

# The jars the run needs: the services', and the floor's unless FLOOR=0.
build_jars() {
  local module jar missing=() stale=() modules=("${SERVICES[@]}")
  if [[ $FLOOR == 1 ]]; then modules+=(transport-floor); fi
  for module in "${modules[@]}"; do
    jar=$(jar_of "$module")
    if [[ -z $jar ]]; then missing+=("$module")
    elif sources_newer_than "$module" "$jar"; then stale+=("$module"); fi
  done
  if (( ${#missing[@]} + ${#stale[@]} == 0 )); then
    say "jars are up to date"
    return
  fi
  if [[ $LAB_SKIP_BUILD == 1 ]]; then
    (( ${#missing[@]} == 0 )) || die "no jar for ${missing[*]} and LAB_SKIP_BUILD=1: build first with ./mvnw -B install -DskipTests"
    say "warning: the jars of ${stale[*]} are older than their sources; LAB_SKIP_BUILD=1, so they are used as they are"
    return
  fi
  modules=("${missing[@]}" "${stale[@]}")
  say "building ${modules[*]} (./mvnw -B -q package -DskipTests)"
  (cd "$ROOT_DIR" && ./mvnw -B -q package -DskipTests -pl "$(IFS=,; echo "${modules[*]}")" -am) \
    || die "the build failed (see above)"
}

ensure_ab() {
  command -v ab >/dev/null && return
  local sudo=()
  if command -v apt-get >/dev/null; then
    if [[ $(id -u) != 0 ]] && command -v sudo >/dev/null && sudo -n true 2>/dev/null; then sudo=(sudo -n); fi
    if [[ $(id -u) == 0 || ${#sudo[@]} -gt 0 ]]; then
      say "ApacheBench (ab) is missing: installing Debian's apache2-utils"
      export DEBIAN_FRONTEND=noninteractive
      "${sudo[@]}" apt-get install -y -q apache2-utils >/dev/null \
        || { "${sudo[@]}" apt-get update -q >/dev/null && "${sudo[@]}" apt-get install -y -q apache2-utils >/dev/null; } || true
    fi
  fi
  command -v ab >/dev/null || die "ApacheBench (ab) is missing and the lab could not install it. Install it, then run again:
    Debian/Ubuntu: sudo apt-get install -y apache2-utils
    Fedora/RHEL:   sudo dnf install -y httpd-tools
    Alpine:        apk add apache2-utils"
}

# VARIABLE=PORT of every port the chosen services will listen on, every replica's included.
ports_needed() {
  local module replica
  for module in "${SERVICES[@]}"; do
    for ((replica = 1; replica <= $(replicas_of "$module"); replica++)); do
      case $module in
        aggregator-service) echo "AGGREGATOR_PORT=$AGGREGATOR_PORT" ;;
        square-rest-service) echo "SQUARE_REST_PORT+$((replica - 1))=$(rest_port "$replica")" ;;
        square-grpc-service)
          echo "SQUARE_GRPC_PORT+$((2 * (replica - 1)))=$(grpc_port "$replica")"
          echo "SQUARE_GRPC_ACTUATOR_PORT+$((2 * (replica - 1)))=$(grpc_actuator_port "$replica")" ;;
      esac
    done
  done
}

# REPLICAS copies of each square service, one aggregator. Replica r listens on the configured port + (r - 1) for
# REST and + 2 (r - 1) for gRPC and its actuator: 7575, 7576; 6565/6566, 6567/6568.
replicas_of() {
  case $1 in square-*) echo "$REPLICAS" ;; *) echo 1 ;; esac
}
rest_port() { echo $((SQUARE_REST_PORT + $1 - 1)); }
grpc_port() { echo $((SQUARE_GRPC_PORT + 2 * ($1 - 1))); }
grpc_actuator_port() { echo $((SQUARE_GRPC_ACTUATOR_PORT + 2 * ($1 - 1))); }

# Every replica of a square service, as the aggregator's comma-separated list wants it.
replica_list() {
  local replica list=()
  for ((replica = 1; replica <= REPLICAS; replica++)); do
    case $1 in
      rest) list+=("http://127.0.0.1:$(rest_port "$replica")") ;;
      grpc) list+=("127.0.0.1:$(grpc_port "$replica")") ;;
    esac
  done
  (IFS=,; echo "${list[*]}")
}

# The Spring arguments that put replica $2 of a service on loopback, on the lab's ports.
service_args() {
  case $1 in
    aggregator-service)
      echo --server.address=127.0.0.1 --server.port="$AGGREGATOR_PORT" \
        --aggregator.rest.base-url="$(replica_list rest)" \
        --aggregator.grpc.target="$(replica_list grpc)" "$LAB_AGGREGATOR_ARGS" ;;
    square-rest-service) echo --server.address=127.0.0.1 --server.port="$(rest_port "$2")" ;;
    square-grpc-service)
      echo --server.address=127.0.0.1 --server.port="$(grpc_actuator_port "$2")" \
        --grpc.server.address=127.0.0.1 --grpc.server.port="$(grpc_port "$2")" ;;
  esac
}

# The aggregator's extra arguments. The lab measures how long answers take, so the aggregator may take as
# long as ab waits (AB_TIMEOUT): its own 30 s deadline would turn the slowest answers at the article's load
# on a small machine into 504s. AGGREGATOR_ARGS can still set aggregator.deadline itself.
lab_aggregator_args() {
  local timeout
  timeout=$(lab setting ab_timeout_s)
  if [[ $AGGREGATOR_ARGS == *aggregator.deadline=* ]]; then echo "$AGGREGATOR_ARGS"
  else echo "--aggregator.deadline=${timeout}s${AGGREGATOR_ARGS:+ $AGGREGATOR_ARGS}"; fi
}

health_url() {
  case $1 in
    aggregator-service) echo "http://127.0.0.1:$AGGREGATOR_PORT/actuator/health" ;;
    square-rest-service) echo "http://127.0.0.1:$(rest_port "${2:-1}")/actuator/health" ;;
    square-grpc-service) echo "http://127.0.0.1:$(grpc_actuator_port "${2:-1}")/actuator/health" ;;
  esac
}

# The page of a service's own metrics, which the lab reads around each measured run.
metrics_url() {
  local health
  health=$(health_url "$1" "${2:-1}")
  echo "${health%/health}/prometheus"
}

# host:port of a service's actuator, for Prometheus's scrape targets.
actuator_address() {
  local url
  url=$(health_url "$1")
  url=${url#http://}
  echo "${url%%/*}"
}

# PROMETHEUS=1: a real Prometheus beside the run, scraping the lab's ports, for browsing the metrics live.
start_prometheus() {
  [[ $PROMETHEUS == 1 ]] || return 0
  PROMETHEUS_PID_FILE=$RESULTS_DIR/prometheus.pid
  say "starting Prometheus on 127.0.0.1:$PROMETHEUS_PORT (log: $RESULTS_DIR/prometheus.log)"
  AGGREGATOR_ADDRESS=$(actuator_address aggregator-service) \
  SQUARE_REST_ADDRESS=$(actuator_address square-rest-service) \
  SQUARE_GRPC_ACTUATOR_ADDRESS=$(actuator_address square-grpc-service) \
    "$ROOT_DIR/monitoring/run-prometheus.sh" --background --pid-file "$PROMETHEUS_PID_FILE" \
      --port "$PROMETHEUS_PORT" --listen-address 127.0.0.1 --log-file "$RESULTS_DIR/prometheus.log" >/dev/null \
    || die "Prometheus did not start (see above; PROMETHEUS=0 runs the lab without it)"
  PROMETHEUS_URL="http://127.0.0.1:$PROMETHEUS_PORT"
  say "Prometheus: $PROMETHEUS_URL (targets: $PROMETHEUS_URL/classic/targets); e.g. requests per second per transport:"
  say "  $PROMETHEUS_URL/classic/graph?g0.expr=sum%20by%20(transport)%20(rate(aggregator_fanout_seconds_count%5B1m%5D))"
}

stop_prometheus() {
  [[ -n $PROMETHEUS_PID_FILE ]] || return 0
  say "stopping Prometheus"
  "$ROOT_DIR/monitoring/run-prometheus.sh" --stop --pid-file "$PROMETHEUS_PID_FILE" 2>/dev/null || true
  PROMETHEUS_PID_FILE=
}

# The HTTP base URL ab calls on a service; the gRPC service takes no load from ab directly.
base_url() {
  case $1 in
    aggregator-service) echo "http://127.0.0.1:$AGGREGATOR_PORT" ;;
    square-rest-service) echo "http://127.0.0.1:$SQUARE_REST_PORT" ;;
  esac
}

start_services() {
  local module replica name args url pids metrics java_opts=() waiting=()
  read -r -a java_opts <<<"$JAVA_OPTS"
  STARTED=()
  METRICS=()
  for module in "${SERVICES[@]}"; do
    pids=() metrics=()
    for ((replica = 1; replica <= $(replicas_of "$module"); replica++)); do
      name=$module
      if (( replica > 1 )); then name=$module-$replica; fi
      read -r -a args <<<"$(service_args "$module" "$replica")"
      say "starting $name (log: $RESULTS_DIR/logs/$name.log)"
      "$JAVA" "${java_opts[@]}" -jar "$(jar_of "$module")" "${args[@]}" >"$RESULTS_DIR/logs/$name.log" 2>&1 &
      SERVICE_PIDS+=("$!")
      pids+=("$!")
      metrics+=("$(metrics_url "$module" "$replica")")
      waiting+=("$name=$!=$(health_url "$module" "$replica")")
    done
    url=$(base_url "$module")
    STARTED+=("$module=$(IFS=,; echo "${pids[*]}")${url:+=$url}")
    METRICS+=(--metrics "$module=$(IFS=,; echo "${metrics[*]}")")
  done
  say "waiting up to ${HEALTH_TIMEOUT}s for ${SERVICES[*]} to be healthy"
  lab wait-healthy --logs "$RESULTS_DIR/logs" "$HEALTH_TIMEOUT" "${waiting[@]}" || die "the services did not start (see above); on a busy machine, give them longer with HEALTH_TIMEOUT (now $HEALTH_TIMEOUT s)"
}

# Stops the lab's Python step (on TERM, the measuring stops its ab, the floor its run-floor.sh and the JVMs of
# that) and every service: TERM, then KILL after 20 s.
# It polls instead of using `wait`, which can hang inside a trap that interrupted another `wait`.
stop_all() {
  local pids=()
  stop_prometheus
  if [[ -n $LAB_STEP_PID ]]; then
    pids+=("$LAB_STEP_PID")
    kill -TERM "$LAB_STEP_PID" 2>/dev/null || true
  fi
  if (( ${#SERVICE_PIDS[@]} )); then
    say "stopping the services"
    pids+=("${SERVICE_PIDS[@]}")
    kill -TERM "${SERVICE_PIDS[@]}" 2>/dev/null || true
  fi
  local tries=0
  while any_alive "${pids[@]}" && (( tries++ < 100 )); do sleep 0.2; done
  if any_alive "${pids[@]}"; then kill -KILL "${pids[@]}" 2>/dev/null || true; fi
  LAB_STEP_PID=
  SERVICE_PIDS=()
}

# True while one of the processes runs (a zombie, exited but not yet reaped, does not count).
any_alive() {
  local pid stat
  for pid in "$@"; do
    read -r stat 2>/dev/null <"/proc/$pid/stat" || continue
    stat=${stat##*) }
    [[ ${stat%% *} != Z ]] && return 0
  done
  return 1
}

cleanup() {
  local status=$?
  trap - EXIT INT TERM
  stop_all
  exit "$status"
}

# A long lab command, in the background, so that a signal reaches this script's trap at once instead of after
# it; started directly (not through the lab function, which would put a subshell between), so that its pid is
# Python's.
lab_step() {
  local status=0
  PYTHONPATH="$LAB_PYTHONPATH" "$LAB_PYTHON" -m lab "$@" &
  LAB_STEP_PID=$!
  wait "$LAB_STEP_PID" || status=$?
  LAB_STEP_PID=
  return "$status"
}

measure() {
  lab_step measure "$RESULTS_DIR" --java="$JAVA" --java-opts="$JAVA_OPTS" \
    --aggregator-args="$LAB_AGGREGATOR_ARGS" --repo="$ROOT_DIR" ${PROMETHEUS_URL:+--prometheus-url="$PROMETHEUS_URL"} \
    "${METRICS[@]}" "${STARTED[@]}"
}

# The bare transports, once the services are stopped: the whole machine, with the services' JVM options.
run_floor() {
  say "the transport floor: the bare transports, no Spring, with the aggregator's window (services stopped)"
  lab_step floor "$RESULTS_DIR" --script="$ROOT_DIR/transport-floor/run-floor.sh" \
    --jar="$(jar_of transport-floor)" --java="$JAVA" --java-opts="$JAVA_OPTS"
}

write_report() {
  lab report "$RESULTS_DIR" && return 0
  say "results.json and summary.md are written; once the above is fixed, write the report with:"
  say "  loadtest/run.sh --report $RESULTS_DIR"
  return 1
}

main() {
  case ${1:-} in
    -h|--help) usage; return 0 ;;
    --report)
      [[ -n ${2:-} ]] || { usage >&2; return 2; }
      RESULTS_DIR=$(cd "$2" && pwd)
      LAB_PYTHON=$("$LAB_DIR/python-env.sh") || die "the lab's Python packages could not be installed (see above)"
      write_report
      return ;;
    "") ;;
    *) usage >&2; return 2 ;;
  esac
  require_tools
  local services
  services=$(lab services) || exit 2
  mapfile -t SERVICES <<<"$services"
  LAB_AGGREGATOR_ARGS=$(lab_aggregator_args)
  REPLICAS=$(lab setting replicas)
  : "${RESULTS_DIR:=$LAB_DIR/results/$(date +%Y%m%d-%H%M%S)}"
  [[ $RESULTS_DIR == /* ]] || RESULTS_DIR=$PWD/$RESULTS_DIR
  [[ ! -e $RESULTS_DIR/results.json ]] || die "$RESULTS_DIR already holds results: choose another RESULTS_DIR"

  build_jars
  ensure_ab
  local ports
  mapfile -t ports < <(ports_needed)
  [[ $PROMETHEUS == 0 || $PROMETHEUS == 1 ]] || die "PROMETHEUS must be 0 or 1, not '$PROMETHEUS'"
  if [[ $PROMETHEUS == 1 ]]; then ports+=("PROMETHEUS_PORT=$PROMETHEUS_PORT"); fi
  lab ports "${ports[@]}" || exit 1
  mkdir -p "$RESULTS_DIR/logs"

  trap cleanup EXIT
  trap 'say "interrupted"; exit 130' INT
  trap 'say "terminated"; exit 143' TERM
  start_services
  start_prometheus
  local status=0
  measure || status=$?
  stop_all
  if [[ $status == 130 || $status == 143 ]]; then exit "$status"; fi
  [[ -f $RESULTS_DIR/results.json ]] || exit "$status"
  if [[ $FLOOR == 1 ]]; then
    local floor_status=0
    run_floor || floor_status=$?
    if [[ $floor_status == 130 || $floor_status == 143 ]]; then exit "$floor_status"; fi
    if [[ $floor_status != 0 && $status == 0 ]]; then status=$floor_status; fi
  fi
  if ! write_report && [[ $status == 0 ]]; then status=1; fi
  local floor_folder=
  if [[ $FLOOR == 1 ]]; then floor_folder=", floor/"; fi
  say "results: $RESULTS_DIR (summary.md, results.json, report.html, raw/, logs/$floor_folder)"
  return "$status"
}

main "$@"
