#!/usr/bin/env bash
# The transport floor: each bare transport (no Spring on the path) driven as hard as the lab's window
# allows, on this machine. For each transport it starts a bare server on a free loopback port, runs the
# client against it, samples the server's CPU time over the client's measured window, stops the server,
# and at the end writes OUTPUT_DIR/floor.json. The knobs are environment variables; see README.md.
#
# usage: transport-floor/run-floor.sh OUTPUT_DIR
set -euo pipefail

if [[ $# -ne 1 ]]; then
  echo "usage: $0 OUTPUT_DIR" >&2
  exit 2
fi
out_dir=$1

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
jar=${FLOOR_JAR:-$here/target/transport-floor-1.0.0-SNAPSHOT.jar}
duration=${FLOOR_DURATION:-10s}
# Ten seconds: the JIT takes that long to compile gRPC's long code path on this kind of machine, and
# until it has, a gRPC run is far below its steady state (see README.md, "Reading the numbers").
warmup=${FLOOR_WARMUP:-10s}
in_flight=${FLOOR_IN_FLIGHT:-800}
streams=${FLOOR_STREAMS:-100}
messages=${FLOOR_MESSAGES:-1000}
connections=${FLOOR_CONNECTIONS:-64}
transports=${FLOOR_TRANSPORTS:-http grpc-unary grpc-stream}
start_timeout=${FLOOR_START_TIMEOUT:-60}
java=${JAVA:-java}
read -r -a java_opts <<< "${JAVA_OPTS:-}"

say() { echo "run-floor: $*" >&2; }
die() { say "$*"; exit 1; }

[[ -f $jar ]] || die "no jar at $jar; build it first: ./mvnw -B -pl transport-floor -am package"
for transport in $transports; do
  case $transport in
    http | grpc-unary | grpc-stream) ;;
    *) die "unknown transport '$transport' in FLOOR_TRANSPORTS; expected http, grpc-unary or grpc-stream" ;;
  esac
done

work=$(mktemp -d)
server_pid=
client_pid=

# Ends a process this script started: TERM, then KILL if it is still there after five seconds.
stop_process() {
  local pid=$1
  kill -0 "$pid" 2>/dev/null || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for _ in {1..50}; do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}

cleanup() {
  [[ -n $client_pid ]] && stop_process "$client_pid"
  [[ -n $server_pid ]] && stop_process "$server_pid"
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

clock_ticks=$(getconf CLK_TCK)

# CPU time (user + system) of a process so far, in clock ticks, from /proc/PID/stat: fields 14 and 15,
# counted after the command name, which is in parentheses and may contain spaces.
cpu_ticks() {
  local stat
  stat=$(< "/proc/$1/stat")
  local -a fields
  read -r -a fields <<< "${stat##*) }"
  echo $((fields[11] + fields[12]))
}

seconds_of_ticks() {
  awk -v ticks="$1" -v hz="$clock_ticks" 'BEGIN { printf "%.3f", ticks / hz }'
}

load_average() {
  local one _
  read -r one _ < /proc/loadavg
  echo "$one"
}

json_string() {
  local text=$1
  text=${text//\\/\\\\}
  text=${text//\"/\\\"}
  printf '"%s"' "$text"
}

# Starts a bare server (grpc or http) on a port the system chooses and sets server_pid and port once it
# prints "listening on 127.0.0.1:PORT".
# Each server has files of its own: the one before may have written the same line.
start_server() {
  local kind=$1 name=$2
  local out="$work/$name.server.out" err="$work/$name.server.err"
  "$java" "${java_opts[@]}" -jar "$jar" server "$kind" --host 127.0.0.1 --port 0 > "$out" 2> "$err" &
  server_pid=$!
  port=
  for ((tenth = 0; tenth < start_timeout * 10; tenth++)); do
    # The server's output file may not exist yet: sed failing then must not end the script (set -e).
    port=$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9][0-9]*\)$/\1/p' "$out" 2> /dev/null || true)
    [[ -n $port ]] && return 0
    if ! kill -0 "$server_pid" 2>/dev/null; then
      cat "$err" >&2
      die "the $kind server exited before listening"
    fi
    sleep 0.1
  done
  die "the $kind server was not listening after ${start_timeout}s"
}

# Runs the client for one transport against 127.0.0.1:$port. Its progress lines come through a FIFO so
# that the server's CPU time is sampled the moment the client opens and closes its window.
run_client() {
  local transport=$1
  rm -f "$work/progress"
  mkfifo "$work/progress"
  "$java" "${java_opts[@]}" -jar "$jar" client "$transport" --target "127.0.0.1:$port" \
    --in-flight "$in_flight" --streams "$streams" --messages "$messages" --connections "$connections" \
    --warmup "$warmup" --duration "$duration" > "$work/client.json" 2> "$work/progress" &
  client_pid=$!
  cpu_at_open= cpu_at_close= load_at_open=
  local line
  while IFS= read -r line; do
    case $line in
      "floor: measuring"*) cpu_at_open=$(cpu_ticks "$server_pid"); load_at_open=$(load_average) ;;
      "floor: measured"*) cpu_at_close=$(cpu_ticks "$server_pid") ;;
    esac
    printf '  %s\n' "$line" >&2
  done < "$work/progress"
  local status=0
  wait "$client_pid" || status=$?
  client_pid=
  [[ $status -eq 0 ]] || die "the $transport client failed (exit status $status)"
  [[ -n $cpu_at_open && -n $cpu_at_close ]] || die "the $transport client did not mark its measured window"
}

runs=()
for transport in $transports; do
  case $transport in
    http) kind=http ;;
    *) kind=grpc ;;
  esac
  say "$transport: starting a bare $kind server"
  start_server "$kind" "$transport"
  say "$transport: server on 127.0.0.1:$port (pid $server_pid); client: warm-up $warmup, measuring $duration"
  run_client "$transport"
  stop_process "$server_pid"
  server_pid=

  client_json=$(< "$work/client.json")
  [[ $client_json == \{*\} ]] || die "the $transport client printed no JSON object: $client_json"
  server_cpu=$(seconds_of_ticks $((cpu_at_close - cpu_at_open)))
  runs+=("${client_json%\}},\"server_cpu_seconds\":$server_cpu,\"load_average_1m\":$load_at_open}")
  say "$transport: done; server CPU ${server_cpu}s over the window"
done

commit=$(git -C "$here" rev-parse HEAD 2> /dev/null || echo unknown)
transport_list=
for transport in $transports; do
  transport_list+="${transport_list:+,}$(json_string "$transport")"
done
run_list=$(IFS=,; echo "${runs[*]}")

settings="{\"duration\":$(json_string "$duration"),\"warmup\":$(json_string "$warmup")"
settings+=",\"in_flight\":$in_flight,\"streams\":$streams,\"messages\":$messages,\"connections\":$connections"
settings+=",\"transports\":[$transport_list],\"java_opts\":$(json_string "${JAVA_OPTS:-}")"
settings+=",\"processors\":$(nproc),\"git_commit\":$(json_string "$commit")"
settings+=",\"finished_at\":$(json_string "$(date -u +%Y-%m-%dT%H:%M:%SZ)")}"

mkdir -p "$out_dir"
printf '{"settings":%s,"runs":[%s]}\n' "$settings" "$run_list" > "$work/floor.json"
mv "$work/floor.json" "$out_dir/floor.json"
say "wrote $out_dir/floor.json"
