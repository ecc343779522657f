#!/usr/bin/env bash
# Runs a real Prometheus against the services on this machine, with monitoring/prometheus.yml.
#
#   monitoring/run-prometheus.sh                      foreground; Ctrl-C stops it and removes its data
#   monitoring/run-prometheus.sh --background --pid-file /tmp/prom.pid
#                                                     returns once Prometheus is ready
#   monitoring/run-prometheus.sh --stop --pid-file /tmp/prom.pid
#
# Run with --help for every option and knob.
set -euo pipefail

SCRIPT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")"
MONITORING_DIR="$(dirname "$SCRIPT")"
readonly SCRIPT MONITORING_DIR
readonly DEFAULT_AGGREGATOR=127.0.0.1:8080
readonly DEFAULT_SQUARE_REST=127.0.0.1:7575
readonly DEFAULT_SQUARE_GRPC_ACTUATOR=127.0.0.1:6566
readonly READY_TIMEOUT_SECONDS=60
readonly STOP_TIMEOUT_SECONDS=30

port="${PROMETHEUS_PORT:-9090}"
listen_address="${PROMETHEUS_LISTEN_ADDRESS:-127.0.0.1}"
config="${PROMETHEUS_CONFIG:-$MONITORING_DIR/prometheus.yml}"
data_dir="${PROMETHEUS_DATA_DIR:-}"
pid_file="${PROMETHEUS_PID_FILE:-}"
log_file="${PROMETHEUS_LOG_FILE:-}"
mode=foreground

usage() {
  cat <<EOF
Usage: $(basename "$SCRIPT") [--background | --stop] [options]

Runs Prometheus (Debian's package; installed with apt-get when missing and running as root) on
http://LISTEN_ADDRESS:PORT, scraping the aggregator, the REST square service and the gRPC square service's
actuator. Foreground by default: INT or TERM stops Prometheus cleanly and exits 0.

Modes:
  (none)              run in the foreground until INT/TERM
  --background        start detached, wait until Prometheus is ready, write the pid file, return 0
  --stop              stop the instance started with --background and the same --pid-file, wait for it

Options (each also an environment variable):
  --port N            PROMETHEUS_PORT             listen port (default 9090); refused if taken
  --listen-address A  PROMETHEUS_LISTEN_ADDRESS   listen address (default 127.0.0.1)
  --config FILE       PROMETHEUS_CONFIG           configuration (default monitoring/prometheus.yml)
  --data-dir DIR      PROMETHEUS_DATA_DIR         keep the time series in DIR, kept on exit
                                                  (default: a fresh temporary folder, removed on exit)
  --pid-file FILE     PROMETHEUS_PID_FILE         required with --background and --stop
  --log-file FILE     PROMETHEUS_LOG_FILE         background log (default: the pid file with .log)

Scrape targets, replacing the defaults of the configuration (host:port):
  AGGREGATOR_ADDRESS            default $DEFAULT_AGGREGATOR
  SQUARE_REST_ADDRESS           default $DEFAULT_SQUARE_REST
  SQUARE_GRPC_ACTUATOR_ADDRESS  default $DEFAULT_SQUARE_GRPC_ACTUATOR (the management port, not gRPC's 6565)
EOF
}

die() {
  echo "run-prometheus: $*" >&2
  exit 1
}

say() {
  echo "run-prometheus: $*" >&2
}

parse_args() {
  while (($#)); do
    case "$1" in
      --background) mode=background ;;
      --stop) mode=stop ;;
      --port) port="${2:?--port needs a value}"; shift ;;
      --listen-address) listen_address="${2:?--listen-address needs a value}"; shift ;;
      --config) config="${2:?--config needs a value}"; shift ;;
      --data-dir) data_dir="${2:?--data-dir needs a value}"; shift ;;
      --pid-file) pid_file="${2:?--pid-file needs a value}"; shift ;;
      --log-file) log_file="${2:?--log-file needs a value}"; shift ;;
      -h | --help) usage; exit 0 ;;
      *) usage >&2; die "unknown argument: $1" ;;
    esac
    shift
  done
  [[ "$port" =~ ^[0-9]+$ ]] || die "the port must be a number, not '$port'"
}

# The address a local client reaches the listener on.
probe_host() {
  case "$listen_address" in
    0.0.0.0 | '' | '[::]' | '::') echo 127.0.0.1 ;;
    *) echo "$listen_address" ;;
  esac
}

port_in_use() {
  timeout 2 bash -c "exec 3<>/dev/tcp/$(probe_host)/$port" 2>/dev/null
}

# Plain HTTP/1.0 over bash's /dev/tcp, so that the script needs neither curl nor wget.
http_ok() {
  local path="$1"
  # shellcheck disable=SC2016 # the inner script expands its own arguments
  timeout 2 bash -c '
    exec 3<>"/dev/tcp/$1/$2"
    printf "GET %s HTTP/1.0\r\nHost: %s\r\n\r\n" "$3" "$1" >&3
    read -r _ status _ <&3
    [[ "$status" == 200 ]]' _ "$(probe_host)" "$port" "$path" 2>/dev/null
}

ensure_prometheus_installed() {
  command -v prometheus >/dev/null && return
  local install='apt-get update && apt-get install -y --no-install-recommends prometheus'
  if [[ "$(id -u)" -ne 0 ]] || ! command -v apt-get >/dev/null; then
    die "prometheus is not installed; install Debian's package as root: $install"
  fi
  local port_was_free=true
  port_in_use && port_was_free=false
  say "installing Debian's prometheus package: $install"
  DEBIAN_FRONTEND=noninteractive apt-get update -q >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends prometheus >&2
  # Where systemd runs, the package starts its own Prometheus on 0.0.0.0:9090. It is ours, just installed:
  # stop it so that it neither collides with this run nor stays behind.
  if command -v systemctl >/dev/null && systemctl is-active --quiet prometheus 2>/dev/null; then
    say "stopping and disabling the prometheus service the package just started"
    systemctl stop prometheus || true
    systemctl disable prometheus || true
  fi
  if $port_was_free && port_in_use; then
    die "after installing prometheus something listens on port $port; stop it or choose --port"
  fi
}

# Copies the configuration with the scrape targets replaced, when any target knob is set.
effective_config() {
  local run_dir="$1"
  local aggregator="${AGGREGATOR_ADDRESS:-$DEFAULT_AGGREGATOR}"
  local square_rest="${SQUARE_REST_ADDRESS:-$DEFAULT_SQUARE_REST}"
  local square_grpc="${SQUARE_GRPC_ACTUATOR_ADDRESS:-$DEFAULT_SQUARE_GRPC_ACTUATOR}"
  if [[ "$aggregator/$square_rest/$square_grpc" == \
        "$DEFAULT_AGGREGATOR/$DEFAULT_SQUARE_REST/$DEFAULT_SQUARE_GRPC_ACTUATOR" ]]; then
    echo "$config"
    return
  fi
  local address='^[A-Za-z0-9._-]+:[0-9]+$'
  for target in "$aggregator" "$square_rest" "$square_grpc"; do
    [[ "$target" =~ $address ]] || die "a scrape target must be host:port, not '$target'"
  done
  sed -e "s/'$DEFAULT_AGGREGATOR'/'$aggregator'/" \
      -e "s/'$DEFAULT_SQUARE_REST'/'$square_rest'/" \
      -e "s/'$DEFAULT_SQUARE_GRPC_ACTUATOR'/'$square_grpc'/" \
      "$config" >"$run_dir/prometheus.yml"
  # rule_files are relative to the configuration's folder: keep them found from the copy.
  local config_dir
  config_dir="$(cd "$(dirname "$config")" && pwd)"
  if [[ -d "$config_dir/rules" ]]; then
    ln -s "$config_dir/rules" "$run_dir/rules"
  fi
  echo "$run_dir/prometheus.yml"
}

check_config() {
  local file="$1"
  if command -v promtool >/dev/null; then
    promtool check config "$file" >/dev/null 2>"$run_dir/promtool.err" \
      || { cat "$run_dir/promtool.err" >&2; die "invalid configuration: $file"; }
  fi
}

preflight() {
  [[ -f "$config" ]] || die "no configuration at $config"
  ensure_prometheus_installed
  if port_in_use; then
    die "port $port is already in use on $(probe_host); stop what listens there (ss -ltnp 'sport = :$port') or pass --port"
  fi
}

prometheus_pid=''
run_dir=''

cleanup() {
  if [[ -n "$prometheus_pid" ]] && kill -0 "$prometheus_pid" 2>/dev/null; then
    kill -TERM "$prometheus_pid" 2>/dev/null || true
    wait "$prometheus_pid" 2>/dev/null || true
  fi
  if [[ -n "$run_dir" ]]; then
    rm -rf "$run_dir"
  fi
}

on_signal() {
  say "stopping Prometheus (pid $prometheus_pid)"
  trap - INT TERM
  if [[ -n "$prometheus_pid" ]]; then
    kill -TERM "$prometheus_pid" 2>/dev/null || true
    wait "$prometheus_pid" 2>/dev/null || true
    prometheus_pid=''
  fi
  say "stopped"
  exit 0
}

run_foreground() {
  preflight
  trap cleanup EXIT
  trap on_signal INT TERM
  run_dir="$(mktemp -d -t run-prometheus.XXXXXX)"
  local data="${data_dir:-$run_dir/data}"
  mkdir -p "$data"
  local file
  file="$(effective_config "$run_dir")"
  check_config "$file"

  prometheus \
    --config.file="$file" \
    --storage.tsdb.path="$data" \
    --web.listen-address="$listen_address:$port" \
    --log.level=warn &
  prometheus_pid=$!

  local waited=0
  until http_ok /-/ready; do
    kill -0 "$prometheus_pid" 2>/dev/null || { wait "$prometheus_pid" || true; prometheus_pid=''; die "Prometheus exited during start"; }
    ((waited++ < READY_TIMEOUT_SECONDS * 4)) || die "Prometheus not ready after ${READY_TIMEOUT_SECONDS}s"
    sleep 0.25
  done
  say "ready on http://$(probe_host):$port (pid $prometheus_pid, config $file, data $data)"

  # wait returns early when a trapped signal arrives; on_signal then stops Prometheus and exits.
  local status=0
  wait "$prometheus_pid" || status=$?
  prometheus_pid=''
  die "Prometheus exited by itself (status $status)"
}

# A pid file is trusted only while it names a live run of this script (pids get reused).
pid_file_process() {
  [[ -f "$pid_file" ]] || return 1
  local pid
  pid="$(<"$pid_file")"
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  kill -0 "$pid" 2>/dev/null || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q 'run-prometheus.sh' || return 1
  echo "$pid"
}

run_background() {
  [[ -n "$pid_file" ]] || die "--background needs --pid-file FILE"
  local running
  if running="$(pid_file_process)"; then
    die "already running (pid $running, pid file $pid_file); stop it first with --stop --pid-file $pid_file"
  fi
  preflight
  log_file="${log_file:-${pid_file%.pid}.log}"
  [[ "$log_file" != "$pid_file" ]] || log_file="$pid_file.log"

  local args=(--port "$port" --listen-address "$listen_address" --config "$config")
  if [[ -n "$data_dir" ]]; then
    args+=(--data-dir "$data_dir")
  fi
  # Its own session, so that signals meant for the caller's process group don't reach it, and no pipe of the
  # caller is held open.
  setsid "$SCRIPT" "${args[@]}" </dev/null >>"$log_file" 2>&1 &
  local pid=$!
  echo "$pid" >"$pid_file"

  local waited=0
  until http_ok /-/ready; do
    if ! kill -0 "$pid" 2>/dev/null; then
      rm -f "$pid_file"
      tail -n 20 "$log_file" >&2 || true
      die "Prometheus did not start; log: $log_file"
    fi
    if ((waited++ >= READY_TIMEOUT_SECONDS * 4)); then
      stop_background
      die "Prometheus not ready after ${READY_TIMEOUT_SECONDS}s; log: $log_file"
    fi
    sleep 0.25
  done
  say "ready on http://$(probe_host):$port (pid $pid, pid file $pid_file, log $log_file)"
  echo "$pid"
}

stop_background() {
  [[ -n "$pid_file" ]] || die "--stop needs --pid-file FILE"
  local pid
  if ! pid="$(pid_file_process)"; then
    say "not running (no live run-prometheus.sh in $pid_file)"
    rm -f "$pid_file"
    return 0
  fi
  kill -TERM "$pid"
  local waited=0
  while kill -0 "$pid" 2>/dev/null; do
    if ((waited++ >= STOP_TIMEOUT_SECONDS * 4)); then
      say "still running after ${STOP_TIMEOUT_SECONDS}s; killing process group $pid"
      kill -KILL -- "-$pid" 2>/dev/null || true
      break
    fi
    sleep 0.25
  done
  rm -f "$pid_file"
  say "stopped (pid $pid)"
}

parse_args "$@"
case "$mode" in
  foreground) run_foreground ;;
  background) run_background ;;
  stop) stop_background ;;
esac
