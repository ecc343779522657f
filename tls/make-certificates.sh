#!/usr/bin/env bash
# A throwaway CA, a server certificate for the square services and a client certificate for the aggregator, as
# PEM files (keys PKCS #8, readable by the owner only), for TLS and mutual TLS between the services (docs/api.md,
# "TLS and mutual TLS"). Never commit what it writes.
#   tls/make-certificates.sh OUT_DIR [HOST ...]
# The server certificate names every HOST (DNS names or IP addresses) and always 127.0.0.1 and localhost.
# DAYS (default 30) is how long they are valid.
set -euo pipefail

if [[ $# -lt 1 || "$1" == -* ]]; then
  echo "usage: $0 OUT_DIR [HOST ...]   (DAYS=30 by default)" >&2
  exit 2
fi
out="$1"
shift
days="${DAYS:-30}"
if ! [[ "$days" =~ ^[1-9][0-9]*$ ]]; then
  echo "DAYS must be a whole number of days, at least 1; got '$days'" >&2
  exit 2
fi
command -v openssl >/dev/null || { echo "openssl is needed (Debian: apt-get install -y openssl)" >&2; exit 1; }

names="DNS:localhost,IP:127.0.0.1"
for host in "$@"; do
  if [[ "$host" =~ ^[0-9.]+$ || "$host" == *:* ]]; then
    names+=",IP:$host"
  elif [[ "$host" =~ ^[A-Za-z0-9*]([A-Za-z0-9.-]*[A-Za-z0-9])?$ ]]; then
    names+=",DNS:$host"
  else
    echo "not a host name or IP address: '$host'" >&2
    exit 2
  fi
done

umask 077
mkdir -p "$out"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

fail() {
  echo "openssl failed (is $out writable, and its files yours?):" >&2
  cat "$work/openssl.log" >&2
  exit 1
}

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days "$days" \
  -subj "/CN=rest-vs-grpc-lab CA" -addext "basicConstraints=critical,CA:TRUE,pathlen:0" \
  -addext "keyUsage=critical,keyCertSign,cRLSign" -keyout "$work/ca.key" -out "$out/ca.pem" 2>"$work/openssl.log" || fail

issue() { # issue NAME SUBJECT EXTENSIONS
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "/CN=$2" \
    -keyout "$out/$1.key" -out "$work/$1.csr" 2>"$work/openssl.log" || fail
  printf '%s\n' "$3" >"$work/$1.ext"
  openssl x509 -req -in "$work/$1.csr" -CA "$out/ca.pem" -CAkey "$work/ca.key" -CAcreateserial \
    -CAserial "$work/ca.srl" -days "$days" -extfile "$work/$1.ext" -out "$out/$1.pem" 2>"$work/openssl.log" || fail
}
issue server "square-service" "basicConstraints=CA:FALSE
extendedKeyUsage=serverAuth
subjectAltName=$names"
issue client "aggregator-service" "basicConstraints=CA:FALSE
extendedKeyUsage=clientAuth"

chmod 644 "$out"/*.pem
# The CA's key is not kept: nothing can sign with it once this script has ended.
echo "wrote $out/ca.pem, server.pem, server.key, client.pem, client.key (valid $days days; server names $names)"
