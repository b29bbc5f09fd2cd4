# Sourced by scripts/kafka.sh and scripts/zipkin.sh: the pid a server's pid file ($PIDFILE) names,
# printed, or a failure when the file is missing, empty or holds no pid.
read_pid() {
  [[ -s $PIDFILE ]] || return 1
  local pid
  pid=$(<"$PIDFILE")
  [[ $pid =~ ^[0-9]+$ ]] || return 1
  printf '%s\n' "$pid"
}
