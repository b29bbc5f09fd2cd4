#!/usr/bin/env bash
# npm run bench: builds, brings up what the benchmarks need (the Kafka broker, MariaDB when it is
# there), runs them on loopback, and stops what it started.
set -euo pipefail
cd "$(dirname "$0")/.."
npm run build >/dev/null

started_kafka=0
if [ -z "${KAFKA_BROKERS:-}" ]; then
  # A broker already listening on the default port (shared, or another tree's) is used as it is.
  if ! bash scripts/kafka.sh status >/dev/null 2>&1 && ! (exec 3<>/dev/tcp/127.0.0.1/9092) 2>/dev/null; then
    bash scripts/kafka.sh start
    started_kafka=1
  fi
  export KAFKA_BROKERS=127.0.0.1:9092
fi
trap '[ "$started_kafka" = 1 ] && bash scripts/kafka.sh stop' EXIT

if [ -z "${DB_URL:-}" ] && mysqladmin --host=127.0.0.1 --user=root ping >/dev/null 2>&1; then
  export DB_URL=mysql://root@127.0.0.1:3306
fi
export LOG_LEVEL="${LOG_LEVEL:-warn}"
# The gateway benchmark puts nginx beside our gateway as the reference reverse proxy when it is there.
if ! command -v nginx >/dev/null 2>&1 && [ ! -x /usr/sbin/nginx ]; then
  echo "nginx is not installed: the gateway benchmark runs without it. To include it: apt-get install -y --no-install-recommends nginx-light" >&2
fi
# BENCH_SECONDS shortens each gateway measurement (default 10 s) for a quick run.
node dist/bench/run.js "$@"
