#!/usr/bin/env bash
# Container health check: GET /actuator/health on 127.0.0.1:$HEALTH_PORT must answer 200 with status UP.
# Plain HTTP/1.0 over bash's /dev/tcp: the JRE base image is not promised to carry curl or wget.
#   healthcheck [PORT]    (default: $HEALTH_PORT, else 8080)
set -euo pipefail

port="${1:-${HEALTH_PORT:-8080}}"
exec 3<>"/dev/tcp/127.0.0.1/$port"
printf 'GET /actuator/health HTTP/1.0\r\nHost: 127.0.0.1\r\nAccept: application/json\r\n\r\n' >&3
response="$(timeout 2 tr -d '\0' <&3)"
status_line="$(head -n 1 <<<"$response" | tr -cd '[:print:]' | cut -c 1-80)"
if [[ "$status_line" =~ ^HTTP/1\.[01]\ 200 && "$response" == *'"status":"UP"'* ]]; then
  exit 0
fi
echo "unhealthy: ${status_line:-no answer} from 127.0.0.1:$port/actuator/health" >&2
exit 1
