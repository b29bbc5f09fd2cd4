#!/usr/bin/env bash
# Runs a Zipkin server (the trace viewer; its exec jar from Maven Central, Java 17) on loopback, the
# way scripts/kafka.sh runs Kafka: scripts/zipkin.sh fetch|start|stop|status
#
# Spans are kept in memory (Zipkin's default storage): a stop forgets them. `TRACING=on npm start`
# exports every service's spans to it; the UI is at http://127.0.0.1:9411/zipkin/.
set -euo pipefail

ZIPKIN_VERSION=3.6.1
DEP_PLUGIN=org.apache.maven.plugins:maven-dependency-plugin:${ZIPKIN_MVN_DEP_PLUGIN_VERSION:-3.6.1}

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${ZIPKIN_CACHE:-$REPO/.cache/zipkin/$ZIPKIN_VERSION}
JAR=$CACHE/zipkin-server-$ZIPKIN_VERSION-exec.jar
WORK=${ZIPKIN_WORK:-$REPO/.tmp/zipkin}
PIDFILE=$WORK/zipkin.pid
HOST=${ZIPKIN_HOST:-127.0.0.1}
PORT=${ZIPKIN_PORT:-9411}
START_TIMEOUT=${ZIPKIN_START_TIMEOUT:-90}

log() { printf 'zipkin.sh: %s\n' "$*" >&2; }
die() {
  log "error: $*"
  exit 1
}

usage() {
  cat >&2 <<EOF
usage: scripts/zipkin.sh fetch|start|stop|status

  fetch    download zipkin-server $ZIPKIN_VERSION (exec jar) with mvn into $CACHE (once)
  start    start it on $HOST:$PORT (UI at http://$HOST:$PORT/zipkin/, spans at /api/v2/spans)
  stop     stop the server named by the pid file
  status   tell whether it runs

environment: ZIPKIN_CACHE, ZIPKIN_WORK (log, pid), ZIPKIN_HOST, ZIPKIN_PORT (9411),
  ZIPKIN_START_TIMEOUT (90 s), ZIPKIN_JAVA_OPTS (default -Xms64m -Xmx512m), ZIPKIN_MVN_ARGS
EOF
}

healthy() { curl -fsS --max-time 2 "http://$HOST:$PORT/health" >/dev/null 2>&1; }

# shellcheck source=scripts/pidfile.sh
source "$(dirname "${BASH_SOURCE[0]}")/pidfile.sh"

# Pids get reused: only a java process running our jar is ours to signal.
is_ours() {
  kill -0 "$1" 2>/dev/null || return 1
  [[ -r /proc/$1/cmdline ]] || return 0
  tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null | grep -q "zipkin-server-$ZIPKIN_VERSION-exec.jar"
}

cmd_fetch() {
  if [[ -s $JAR ]]; then
    log "zipkin-server $ZIPKIN_VERSION already cached in $CACHE"
    return 0
  fi
  command -v mvn >/dev/null || die "mvn not found: install Maven, e.g. apt-get install maven"
  mkdir -p "$CACHE"
  log "fetching io.zipkin:zipkin-server:$ZIPKIN_VERSION:jar:exec from Maven Central"
  # shellcheck disable=SC2086
  mvn -q -B ${ZIPKIN_MVN_ARGS:-} "$DEP_PLUGIN:copy" -Dartifact="io.zipkin:zipkin-server:$ZIPKIN_VERSION:jar:exec" -DoutputDirectory="$CACHE" >&2 ||
    die "mvn could not fetch zipkin-server $ZIPKIN_VERSION"
  [[ -s $JAR ]] || die "mvn ran but $JAR is missing"
}

cmd_start() {
  command -v java >/dev/null || die "java not found: install a JDK 17, e.g. apt-get install openjdk-17-jdk-headless"
  if pid=$(read_pid) && is_ours "$pid"; then
    log "already running (pid $pid) on $HOST:$PORT"
    return 0
  fi
  healthy && die "something else answers on $HOST:$PORT"
  cmd_fetch
  mkdir -p "$WORK"
  local began=$SECONDS
  # shellcheck disable=SC2086
  QUERY_PORT=$PORT nohup setsid java ${ZIPKIN_JAVA_OPTS:--Xms64m -Xmx512m} -jar "$JAR" --armeria.ports[0].ip="$HOST" --armeria.ports[0].port="$PORT" \
    >"$WORK/zipkin.log" 2>&1 </dev/null &
  echo $! >"$PIDFILE"
  while ! healthy; do
    if ! is_ours "$(<"$PIDFILE")"; then
      tail -n 40 "$WORK/zipkin.log" >&2
      die "zipkin exited before it answered"
    fi
    ((SECONDS - began < START_TIMEOUT)) || {
      tail -n 40 "$WORK/zipkin.log" >&2
      die "no answer on $HOST:$PORT within ${START_TIMEOUT}s"
    }
    sleep 0.5
  done
  log "zipkin $ZIPKIN_VERSION up on http://$HOST:$PORT/zipkin/ (pid $(<"$PIDFILE"), $((SECONDS - began))s)"
}

cmd_stop() {
  local pid
  if ! pid=$(read_pid) || ! is_ours "$pid"; then
    log "not running"
    rm -f "$PIDFILE"
    return 0
  fi
  kill "$pid"
  for _ in $(seq 1 60); do
    is_ours "$pid" || break
    sleep 0.5
  done
  is_ours "$pid" && kill -9 "$pid"
  rm -f "$PIDFILE"
  log "stopped (pid $pid)"
}

cmd_status() {
  if pid=$(read_pid) && is_ours "$pid" && healthy; then
    log "running (pid $pid) on http://$HOST:$PORT/zipkin/"
  else
    log "not running"
    return 1
  fi
}

case ${1:-} in
  fetch) cmd_fetch ;;
  start) cmd_start ;;
  stop) cmd_stop ;;
  status) cmd_status ;;
  *)
    usage
    exit 2
    ;;
esac
