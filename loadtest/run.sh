#!/usr/bin/env bash
# The load-test lab, in one command. Everything it does (build the jars, start the services, measure each
# path with ab, run the transport floor, write the results and the report, stop what it started) is the
# Python package in loadtest/lab; this script only makes sure that Python has the lab's packages.
set -euo pipefail

LAB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

lab() {
  local python
  python=$("$LAB_DIR/python-env.sh")
  PYTHONPATH="$LAB_DIR${PYTHONPATH:+:$PYTHONPATH}" exec "$python" -m lab "$@"
}

case ${1:-} in
  -h | --help)
    cat <<'EOF_USAGE'
Usage: loadtest/run.sh                  measure every path, write the results folder (the knobs below)
       loadtest/run.sh --report DIR     (re)write DIR/summary.md, report.html, figures.csv and figures.om from
                                        DIR/results.json; with EXPECT set, judge those gates against it
       loadtest/run.sh --compare OLD NEW  compare two results folders path by path (each change tested); writes
                                        NEW/comparison.md and comparison.json
       loadtest/run.sh --<experiment> [OPTIONS]   one of the experiments below; --<experiment> --help: its options
       loadtest/run.sh --help           this text
       loadtest/slow-machine.sh PERCENT loadtest/run.sh ...   any of these on PERCENT of one core
EOF_USAGE
    python=$("$LAB_DIR/python-env.sh")
    PYTHONPATH="$LAB_DIR" "$python" -m lab commands
    cat <<'EOF_USAGE'

Example sweep: CONCURRENCY="1 8 64" N="10 100" REQUESTS=200 loadtest/run.sh

EOF_USAGE
    lab knobs ;;
  --report)
    [[ -n ${2:-} ]] || { echo "usage: loadtest/run.sh --report DIR" >&2; exit 2; }
    lab report "$2" ;;
  "") lab run ;;
  --*) lab "${1#--}" "${@:2}" ;;
  *) echo "unknown argument '$1'; see loadtest/run.sh --help" >&2; exit 2 ;;
esac
