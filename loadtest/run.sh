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
Usage: loadtest/run.sh              measure every path, write the results folder
       loadtest/run.sh --report DIR  (re)write DIR/summary.md and DIR/report.html from DIR/results.json
       loadtest/run.sh --faults [OPTIONS]  network faults under load (Toxiproxy); --faults --help: its options
       loadtest/run.sh --clients [OPTIONS] many clients on each path (ab up to 5,000); --clients --help: its options
       loadtest/run.sh --article DIR [OPTIONS]  the article's own code (built in DIR) and ours, side by side
       loadtest/run.sh --profile [OPTIONS]  CPU flame graphs and CPU per call by layer of the gRPC paths
       loadtest/run.sh --help        this text

Example sweep: CONCURRENCY="1 8 64" N="10 100" REQUESTS=200 loadtest/run.sh

EOF_USAGE
    lab knobs ;;
  --report)
    [[ -n ${2:-} ]] || { echo "usage: loadtest/run.sh --report DIR" >&2; exit 2; }
    lab report "$2" ;;
  --faults) lab faults "${@:2}" ;;
  --clients) lab clients "${@:2}" ;;
  --article) lab article "${@:2}" ;;
  --profile) lab profile "${@:2}" ;;
  "") lab run ;;
  *) echo "unknown argument '$1'; see loadtest/run.sh --help" >&2; exit 2 ;;
esac
