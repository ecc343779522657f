#!/usr/bin/env bash
# Makes sure loadtest/.venv has the lab's pinned Python packages (requirements.txt) and prints its python.
# Used by run.sh and by the Maven build, so that both run the lab with the same packages. Safe to run again:
# it installs only when the requirements changed since the last install.
set -euo pipefail

LAB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
VENV=$LAB_DIR/.venv
readonly LAB_DIR VENV

fail() { printf '[lab] ERROR: %s\n' "$*" >&2; exit 1; }

command -v python3 >/dev/null || fail "python3 is missing: install Python 3.8 or newer (Debian: apt-get install -y python3)"
python3 -c 'import sys; sys.exit(sys.version_info < (3, 8))' || fail "python3 is older than 3.8: $(python3 --version 2>&1)"
if ! python3 -c 'import venv, ensurepip' 2>/dev/null; then
  # Debian splits venv and pip out of python3; install them when allowed, as the lab does for ab.
  if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
    printf '[lab] installing Debian'\''s python3-venv for the lab'\''s Python packages\n' >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q python3-venv >/dev/null \
      || { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q python3-venv >/dev/null; } \
      || true
  fi
  python3 -c 'import venv, ensurepip' 2>/dev/null \
    || fail "python3 cannot make a virtual environment: install it (Debian: sudo apt-get install -y python3-venv)"
fi

if ! cmp -s "$LAB_DIR/requirements.txt" "$VENV/requirements.txt" 2>/dev/null || [[ ! -x $VENV/bin/python ]]; then
  printf '[lab] installing the lab'\''s Python packages into %s\n' "$VENV" >&2
  rm -rf "$VENV"
  python3 -m venv "$VENV"
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check -r "$LAB_DIR/requirements.txt" >&2 \
    || fail "pip could not install $LAB_DIR/requirements.txt (see above)"
  cp "$LAB_DIR/requirements.txt" "$VENV/requirements.txt"
fi
printf '%s\n' "$VENV/bin/python"
