#!/usr/bin/env bash
# scripts/services.sh — install and run ackcrawl's backing services on loopback.
#
#   scripts/services.sh up     [rabbitmq|kafka|minio|postgres ...]   (default: all four)
#   scripts/services.sh down   [service ...]
#   scripts/services.sh status [service ...]   (exit 0 only when every named service is up)
#
#   scripts/services.sh cluster-up     [rabbitmq|kafka]   3-node broker clusters (default: both)
#   scripts/services.sh cluster-down   [rabbitmq|kafka]
#   scripts/services.sh cluster-status [rabbitmq|kafka]
#   scripts/services.sh cluster-stop   rabbitmq-N|kafka-N  (one node, gracefully; cluster-up restarts it)
#   scripts/services.sh cluster-pid    rabbitmq-N|kafka-N
#   scripts/services.sh cluster-rabbitmqctl [rabbitmq-queues|rabbitmq-diagnostics] ARGS...
#   scripts/services.sh rabbitmqctl ARGS...   (the single node of `up`, e.g. a resource alarm)
#
# Everything runs as plain background processes (no systemd, no Docker), bound to 127.0.0.1.
# Data, logs and PID files live in .services/<service>/ at the repo root; downloads and builds
# in .cache/ (plus ~/.m2 and the Go module/build caches). `up` is idempotent: it installs what
# is missing on first use, starts what is not running, and waits until each service really
# answers. `down` stops only the PIDs recorded here: a graceful signal first, SIGKILL after
# $SERVICES_STOP_TIMEOUT seconds.
#
# Connection defaults the project uses (dev-only credentials, loopback only):
#   RabbitMQ   amqp://guest:guest@127.0.0.1:5672          (RabbitMQ 3.10.8 from Debian, no plugins)
#   Kafka      127.0.0.1:9092  PLAINTEXT, KRaft controller 127.0.0.1:9093 (Kafka 3.9.2, Maven Central)
#   MinIO      http://127.0.0.1:9000  access key ackcrawl / secret ackcrawl-secret
#              console http://127.0.0.1:9001                (built with go install, version below)
#   PostgreSQL postgres://ackcrawl:ackcrawl@127.0.0.1:5432/ackcrawl   (Debian's PostgreSQL 15)
#   Chromium   /usr/bin/chromium, Debian's package, for rendering (installed by `up`, not a service)
#
# Pinned versions (verified on Debian 12, Java 17, Go 1.26):
#   Kafka 3.9.2: the newest 3.9.x on Maven Central. Kafka 4.x removed old protocol versions
#     (KIP-896) and the client, kafkajs 2.2.4, is no longer maintained, so stay on 3.9.
#     Verified end to end with kafkajs 2.2.4 (admin create/delete topic, produce, group consume).
#   MinIO: github.com/minio/minio@latest resolved to v0.0.0-20260212201848-7aac2a2c5b7c
#     (`minio --version` then says DEVELOPMENT.GOGET). MINIO_VERSION=latest re-resolves it.
#   A first build of MinIO takes ~5-6 min on 2 cores; it runs in the background while the other
#   services install and start.
#
# Notes:
#   - Kafka: auto.create.topics.enable=false (create topics with the admin API); replication
#     factor 1 for everything; heap $KAFKA_HEAP (default -Xmx512m). Logs: .services/kafka/logs.
#   - RabbitMQ: node ackcrawl@localhost, own Erlang cookie in .services/rabbitmq/home; the Erlang
#     distribution port (25672) and epmd (4369) listen on loopback too. epmd is a shared Erlang
#     daemon and is left running by `down`. CLI: HOME=.services/rabbitmq/home
#     /usr/lib/rabbitmq/bin/rabbitmqctl -n ackcrawl@localhost ...
#   - PostgreSQL: role ackcrawl (LOGIN CREATEDB, so tests may create scratch databases), database
#     ackcrawl; the postgres superuser is reachable only through the Unix socket in
#     .services/postgres/run (peer auth). An apt-started cluster on 5432 is stopped with
#     pg_ctlcluster; a system rabbitmq-server on 5672 with `service ... stop`.
#   - Env overrides: SERVICES_UP_TIMEOUT (180 s per service), SERVICES_STOP_TIMEOUT (60 s),
#     KAFKA_VERSION, KAFKA_HEAP, KAFKA_CLUSTER_HEAP (the cluster brokers, -Xmx384m), MINIO_VERSION.
set -euo pipefail

KAFKA_VERSION="${KAFKA_VERSION:-3.9.2}"
MINIO_MODULE="github.com/minio/minio"
MINIO_VERSION="${MINIO_VERSION:-v0.0.0-20260212201848-7aac2a2c5b7c}"

HOST=127.0.0.1
RABBITMQ_PORT=5672
KAFKA_PORT=9092
KAFKA_CONTROLLER_PORT=9093
MINIO_PORT=9000
MINIO_CONSOLE_PORT=9001
PG_PORT=5432
RABBITMQ_NODE="ackcrawl@localhost"
MINIO_USER=ackcrawl
MINIO_PASSWORD=ackcrawl-secret
PG_USER=ackcrawl
PG_PASSWORD=ackcrawl
PG_DB=ackcrawl

UP_TIMEOUT="${SERVICES_UP_TIMEOUT:-180}"     # seconds each service gets to answer
STOP_TIMEOUT="${SERVICES_STOP_TIMEOUT:-60}"  # seconds before SIGKILL on `down`
KAFKA_HEAP="${KAFKA_HEAP:--Xmx512m -Xms256m}"

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SVC="$ROOT/.services"
# A git worktree may link .services to the main checkout's: resolve it, so the markers below (which
# name the data directories) match the processes that checkout started, and `down` from a worktree
# stops them instead of finding "nothing running" and deleting their PID files.
if [[ -L $SVC ]]; then SVC="$(cd "$SVC" && pwd -P)"; fi
CACHE="$ROOT/.cache"
ALL_SERVICES=(rabbitmq kafka minio postgres)

KAFKA_LIBS="$CACHE/kafka/$KAFKA_VERSION/libs"
MINIO_BIN="$CACHE/bin/minio"
MINIO_BUILD_LOG="$CACHE/minio-build.log"
MINIO_BUILD_PID=""

# ---------------------------------------------------------------------------------------------
# small helpers

log() { printf '[services] %s\n' "$*" >&2; }
die() {
  printf '[services] ERROR: %s\n' "$*" >&2
  exit 1
}
have() { command -v "$1" >/dev/null 2>&1; }

# true when something accepts TCP connections on 127.0.0.1:$1
port_open() { timeout 2 bash -c "exec 3<>/dev/tcp/$HOST/$1" 2>/dev/null; }

# the PIDs listening on port $1 (any address), for error messages
port_owners() {
  have ss || return 0
  ss -H -ltnp "sport = :$1" 2>/dev/null | grep -o 'pid=[0-9]*' | cut -d= -f2 | sort -u | tr '\n' ' '
}

# true when PID $1 exists and is not a zombie
alive() {
  local state
  [[ -r /proc/$1/stat ]] || return 1
  state="$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" || return 1
  [[ -n $state && $state != Z ]]
}

pidfile() { echo "$SVC/$1/$1.pid"; }

# a string that the command line of our process for service $1 contains (guards against PID reuse)
marker() {
  case "$1" in
    rabbitmq) echo "rabbitmq-server" ;;
    kafka) echo "$SVC/kafka/server.properties" ;;
    minio) echo "$SVC/minio/data" ;;
    postgres) echo "bin/postgres -D" ;;
  esac
}

# print the PID of our running process for service $1, or fail
svc_pid() {
  local f pid
  f="$(pidfile "$1")"
  [[ -s $f ]] || return 1
  pid="$(<"$f")"
  [[ $pid =~ ^[0-9]+$ ]] || return 1
  alive "$pid" || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$(marker "$1")" || return 1
  echo "$pid"
}

# start_bg SERVICE LOGFILE CMD...: run CMD in its own session (so it outlives this shell and its
# process group is ours alone), output appended to LOGFILE, and record its PID.
start_bg() {
  local name="$1" logfile="$2"
  shift 2
  mkdir -p "$(dirname "$logfile")"
  printf '\n===== %s starting %s =====\n' "$(date -Is)" "$name" >>"$logfile"
  # 9>&- : the daemon must not inherit the lock that this script holds on fd 9
  (cd / && exec setsid "$@" >>"$logfile" 2>&1 </dev/null 9>&-) &
  local pid=$! i
  echo "$pid" >"$(pidfile "$name")"
  # Until the subshell above execs, its command line is this script's, and svc_pid would take the
  # service for one that exited during start-up (seen on a loaded machine): wait for the exec.
  for ((i = 0; i < 100; i++)); do
    alive "$pid" || break
    tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$(marker "$name")" && break
    sleep 0.1
  done
}

# stop_pid NAME PID SIGNAL: graceful signal, wait, then SIGKILL the process group
stop_pid() {
  local name="$1" pid="$2" sig="$3" deadline
  log "$name: stopping pid $pid (SIG$sig)"
  kill "-$sig" "$pid" 2>/dev/null || true
  deadline=$((SECONDS + STOP_TIMEOUT))
  while alive "$pid" && ((SECONDS < deadline)); do sleep 0.5; done
  if alive "$pid"; then
    log "$name: still running after ${STOP_TIMEOUT}s, sending SIGKILL"
    kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
    sleep 1
  fi
  # leftovers of the session we started (the process group id is the PID we recorded)
  if kill -0 -- "-$pid" 2>/dev/null; then
    sleep 2
    kill -KILL -- "-$pid" 2>/dev/null || true
  fi
}

tail_logs() {
  local f
  for f in "$@"; do
    [[ -f $f ]] || continue
    printf -- '----- last lines of %s -----\n' "$f" >&2
    tail -n 40 "$f" >&2
  done
}

# packages -------------------------------------------------------------------------------------

APT_UPDATED=""
apt_install() {
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  ((${#missing[@]})) || return 0
  [[ $(id -u) == 0 ]] || die "need root to apt-get install ${missing[*]}"
  log "apt-get install ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  # keep the packages' init scripts from starting system-wide instances on our ports
  local made_policy=""
  if [[ ! -e /usr/sbin/policy-rc.d ]]; then
    printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
    chmod 755 /usr/sbin/policy-rc.d
    made_policy=1
  fi
  local rc=0
  if [[ -z $APT_UPDATED ]]; then
    apt-get -o DPkg::Lock::Timeout=300 update -qq >&2 || rc=$?
    APT_UPDATED=1
  fi
  if ((rc == 0)); then
    apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends "${missing[@]}" >&2 || rc=$?
  fi
  [[ -n $made_policy ]] && rm -f /usr/sbin/policy-rc.d
  ((rc == 0)) || die "apt-get install ${missing[*]} failed (exit $rc)"
}

ensure_java() {
  have java || apt_install default-jre-headless
  have mvn || apt_install maven
}

go_bin() {
  if have go; then
    command -v go
  elif [[ -x /usr/local/go/bin/go ]]; then
    echo /usr/local/go/bin/go
  else
    return 1
  fi
}

# port conflicts ----------------------------------------------------------------------------------

# free_port SERVICE PORT: the port must not be held by anything but our own process
free_port() {
  local name="$1" port="$2"
  port_open "$port" || return 0
  case "$name" in
    rabbitmq)
      log "rabbitmq: port $port is taken by another process; stopping a system rabbitmq-server if there is one"
      if have systemctl && [[ -d /run/systemd/system ]]; then
        systemctl stop rabbitmq-server >/dev/null 2>&1 || true
      else
        service rabbitmq-server stop >/dev/null 2>&1 || true
      fi
      ;;
    postgres)
      log "postgres: port $port is taken by another process; stopping system clusters on it"
      if have pg_lsclusters; then
        local ver cl p st
        while read -r ver cl p st _; do
          if [[ $p == "$port" && $st == online* ]]; then
            log "postgres: pg_ctlcluster $ver $cl stop"
            pg_ctlcluster "$ver" "$cl" stop >&2 || true
          fi
        done < <(pg_lsclusters -h 2>/dev/null)
      fi
      ;;
  esac
  local i
  for i in 1 2 3 4 5 6 7 8 9 10; do
    port_open "$port" || return 0
    sleep 1
  done
  die "$name: 127.0.0.1:$port is already in use by another process (pid(s): $(port_owners "$port")). Stop it and run again."
}

# wait_ready SERVICE CHECK_FUNCTION LOGS...: poll until CHECK_FUNCTION succeeds
wait_ready() {
  local name="$1" check="$2" deadline pid
  shift 2
  deadline=$((SECONDS + UP_TIMEOUT))
  while :; do
    if "$check"; then return 0; fi
    if ! pid="$(svc_pid "$name")"; then
      log "$name: the process exited during start-up"
      tail_logs "$@"
      die "$name failed to start"
    fi
    if ((SECONDS >= deadline)); then
      tail_logs "$@"
      die "$name did not answer within ${UP_TIMEOUT}s (pid $pid still running; see the logs above)"
    fi
    sleep 1
  done
}

# =============================================================================================
# RabbitMQ (Debian package, run directly as a plain process; the management plugin is not used)

RABBIT_DIR="$SVC/rabbitmq"
RABBIT_BIN=/usr/lib/rabbitmq/bin

# rabbit_node_env DIR NODE PORT HOME: the environment of one RabbitMQ node kept in DIR (named NODE,
# listening on PORT, its Erlang cookie in HOME) and of the CLI tools that talk to it, in NODE_ENV
rabbit_node_env() {
  local dir="$1" node="$2" port="$3" home="$4"
  NODE_ENV=(
    HOME="$home"
    RABBITMQ_CONF_ENV_FILE="$dir/rabbitmq-env.conf"
    RABBITMQ_CONFIG_FILE="$dir/rabbitmq.conf"
    RABBITMQ_ADVANCED_CONFIG_FILE="$dir/advanced.config"
    RABBITMQ_ENABLED_PLUGINS_FILE="$dir/enabled_plugins"
    RABBITMQ_MNESIA_BASE="$dir/mnesia"
    RABBITMQ_LOG_BASE="$dir/log"
    RABBITMQ_NODENAME="$node"
    RABBITMQ_USE_LONGNAME=false
    RABBITMQ_NODE_IP_ADDRESS="$HOST"
    RABBITMQ_NODE_PORT="$port"
    RABBITMQ_DIST_PORT=$((port + 20000))
    RABBITMQ_PID_FILE="$dir/beam.pid"
    # Erlang distribution (port + 20000), the CLI's own node and epmd (4369) also stay on loopback
    RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS="-kernel inet_dist_use_interface {127,0,0,1}"
    RABBITMQ_CTL_ERL_ARGS="-kernel inet_dist_use_interface {127,0,0,1}"
    ERL_EPMD_ADDRESS="$HOST"
  )
}

# the environment of the broker and of the CLI tools that talk to it (its own Erlang cookie)
rabbit_env_vars() {
  rabbit_node_env "$RABBIT_DIR" "$RABBITMQ_NODE" "$RABBITMQ_PORT" "$RABBIT_DIR/home"
  RABBIT_ENV=("${NODE_ENV[@]}")
}
rabbit_env_vars

rabbit_cli() { env "${RABBIT_ENV[@]}" "$RABBIT_BIN/$1" -q -n "$RABBITMQ_NODE" "${@:2}"; }

rabbit_start() {
  apt_install rabbitmq-server
  mkdir -p "$RABBIT_DIR"/{home,mnesia,log}
  chmod 700 "$RABBIT_DIR/home"
  : >"$RABBIT_DIR/rabbitmq-env.conf"
  echo '[].' >"$RABBIT_DIR/enabled_plugins"
  echo '[].' >"$RABBIT_DIR/advanced.config"
  cat >"$RABBIT_DIR/rabbitmq.conf" <<EOF
# written by scripts/services.sh
listeners.tcp.1 = $HOST:$RABBITMQ_PORT
# guest/guest is allowed from loopback only (the default, stated here)
loopback_users.guest = true
log.file.level = info
log.console = false
EOF
  if pid="$(svc_pid rabbitmq)"; then
    log "rabbitmq: already running (pid $pid)"
    return 0
  fi
  free_port rabbitmq "$RABBITMQ_PORT"
  # the start script traps SIGTERM and stops the Erlang node gracefully
  start_bg rabbitmq "$RABBIT_DIR/log/console.log" env "${RABBIT_ENV[@]}" "$RABBIT_BIN/rabbitmq-server"
  log "rabbitmq: started (pid $(<"$(pidfile rabbitmq)"))"
}

# a real AMQP 0-9-1 handshake: the broker must answer the protocol header with Connection.Start
amqp_answers() {
  local reply
  reply="$(timeout 3 bash -c "exec 3<>/dev/tcp/$HOST/$RABBITMQ_PORT && printf 'AMQP\x00\x00\x09\x01' >&3 && head -c 7 <&3" 2>/dev/null | od -An -tx1 | tr -d ' \n')" || true
  [[ $reply == 0100000* ]]
}

rabbit_ready() {
  amqp_answers && rabbit_cli rabbitmq-diagnostics ping >/dev/null 2>&1
}

rabbit_logs() { echo "$RABBIT_DIR/log/console.log" "$RABBIT_DIR/log/$RABBITMQ_NODE.log"; }

# =============================================================================================
# Kafka (KRaft, single node; Apache's jars from Maven Central via mvn)

KAFKA_DIR="$SVC/kafka"

kafka_fetch() {
  [[ -f $KAFKA_LIBS/.complete ]] && return 0
  ensure_java
  local work="$CACHE/kafka/$KAFKA_VERSION"
  mkdir -p "$work"
  cat >"$work/pom.xml" <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<!-- throwaway pom written by scripts/services.sh to fetch the Kafka broker and its runtime deps -->
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>dev.ackcrawl.services</groupId>
  <artifactId>kafka-runtime</artifactId>
  <version>0</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>kafka_2.13</artifactId><version>$KAFKA_VERSION</version></dependency>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>kafka-tools</artifactId><version>$KAFKA_VERSION</version></dependency>
    <dependency><groupId>org.slf4j</groupId><artifactId>slf4j-reload4j</artifactId><version>1.7.36</version></dependency>
    <dependency><groupId>ch.qos.reload4j</groupId><artifactId>reload4j</artifactId><version>1.2.25</version></dependency>
  </dependencies>
</project>
EOF
  log "kafka: fetching Kafka $KAFKA_VERSION jars from Maven Central"
  rm -rf "$KAFKA_LIBS.tmp"
  if ! mvn -B -q -ntp -f "$work/pom.xml" dependency:copy-dependencies \
    -DincludeScope=runtime -DoutputDirectory="$KAFKA_LIBS.tmp" >"$work/mvn.log" 2>&1; then
    tail_logs "$work/mvn.log"
    die "kafka: mvn could not fetch org.apache.kafka:kafka_2.13:$KAFKA_VERSION"
  fi
  rm -rf "$KAFKA_LIBS"
  mv "$KAFKA_LIBS.tmp" "$KAFKA_LIBS"
  touch "$KAFKA_LIBS/.complete"
}

kafka_java() {
  # tools: small heap, quick start-up, warnings only
  java -Xmx256m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC \
    -Dlog4j.configuration="file:$KAFKA_DIR/tools-log4j.properties" \
    -cp "$KAFKA_LIBS/*" "$@"
}

kafka_start() {
  kafka_fetch
  ensure_java
  mkdir -p "$KAFKA_DIR"/{data,logs}
  cat >"$KAFKA_DIR/server.properties" <<EOF
# written by scripts/services.sh — single-node KRaft broker+controller on loopback
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@$HOST:$KAFKA_CONTROLLER_PORT
listeners=PLAINTEXT://$HOST:$KAFKA_PORT,CONTROLLER://$HOST:$KAFKA_CONTROLLER_PORT
advertised.listeners=PLAINTEXT://$HOST:$KAFKA_PORT
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=$KAFKA_DIR/data
num.partitions=1
default.replication.factor=1
offsets.topic.replication.factor=1
offsets.topic.num.partitions=10
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=10
min.insync.replicas=1
auto.create.topics.enable=false
delete.topic.enable=true
group.initial.rebalance.delay.ms=0
num.network.threads=2
num.io.threads=4
log.retention.hours=168
log.segment.bytes=104857600
EOF
  kafka_log4j "$KAFKA_DIR" "$KAFKA_DIR/logs"
  if pid="$(svc_pid kafka)"; then
    log "kafka: already running (pid $pid)"
    return 0
  fi
  free_port kafka "$KAFKA_PORT"
  free_port kafka "$KAFKA_CONTROLLER_PORT"
  if [[ ! -f $KAFKA_DIR/data/meta.properties ]]; then
    [[ -s $KAFKA_DIR/cluster.id ]] || kafka_java kafka.tools.StorageTool random-uuid >"$KAFKA_DIR/cluster.id"
    log "kafka: formatting storage (cluster id $(<"$KAFKA_DIR/cluster.id"))"
    kafka_java kafka.tools.StorageTool format --ignore-formatted \
      -t "$(<"$KAFKA_DIR/cluster.id")" -c "$KAFKA_DIR/server.properties" >"$KAFKA_DIR/logs/format.log" 2>&1 ||
      {
        tail_logs "$KAFKA_DIR/logs/format.log"
        die "kafka: storage format failed"
      }
  fi
  # shellcheck disable=SC2086 # KAFKA_HEAP is a list of JVM flags
  start_bg kafka "$KAFKA_DIR/logs/kafka.out" \
    java $KAFKA_HEAP -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:+ExitOnOutOfMemoryError \
    -Djava.awt.headless=true \
    -Dkafka.logs.dir="$KAFKA_DIR/logs" \
    -Dlog4j.configuration="file:$KAFKA_DIR/log4j.properties" \
    -cp "$KAFKA_LIBS/*" kafka.Kafka "$KAFKA_DIR/server.properties"
  log "kafka: started (pid $(<"$(pidfile kafka)"))"
}

# the broker answers a metadata request (list topics) on the client listener
kafka_ready() {
  port_open "$KAFKA_PORT" || return 1
  timeout 60 java -Xmx256m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC \
    -Dlog4j.configuration="file:$KAFKA_DIR/tools-log4j.properties" \
    -cp "$KAFKA_LIBS/*" org.apache.kafka.tools.TopicCommand \
    --bootstrap-server "$HOST:$KAFKA_PORT" --list >/dev/null 2>&1
}

# kafka_log4j DIR LOGS: a broker's log4j.properties in DIR (its server.log in LOGS, rolled at 20 MB)
# and the CLI tools' config beside it (warnings on stderr)
kafka_log4j() {
  cat >"$1/log4j.properties" <<EOF
# written by scripts/services.sh
log4j.rootLogger=INFO, file
log4j.appender.file=org.apache.log4j.RollingFileAppender
log4j.appender.file.File=$2/server.log
log4j.appender.file.MaxFileSize=20MB
log4j.appender.file.MaxBackupIndex=3
log4j.appender.file.layout=org.apache.log4j.PatternLayout
log4j.appender.file.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.kafka.request.logger=WARN
log4j.logger.state.change.logger=WARN
log4j.logger.kafka.log.LogCleaner=WARN
log4j.logger.org.apache.kafka.controller=INFO
EOF
  kafka_tools_log4j "$1"
}

# kafka_tools_log4j DIR: the Kafka CLI tools' log4j config in DIR/tools-log4j.properties
kafka_tools_log4j() {
  cat >"$1/tools-log4j.properties" <<EOF
# written by scripts/services.sh
log4j.rootLogger=WARN, stderr
log4j.appender.stderr=org.apache.log4j.ConsoleAppender
log4j.appender.stderr.Target=System.err
log4j.appender.stderr.layout=org.apache.log4j.PatternLayout
log4j.appender.stderr.layout.ConversionPattern=[%d] %p %m (%c)%n
EOF
}

kafka_logs() { echo "$KAFKA_DIR/logs/kafka.out" "$KAFKA_DIR/logs/server.log"; }

# =============================================================================================
# MinIO (built from the Go module proxy with go install)

MINIO_DIR="$SVC/minio"

minio_build() {
  local want="$MINIO_VERSION" go
  if [[ -x $MINIO_BIN && -f $MINIO_BIN.version && $want != latest && "$(<"$MINIO_BIN.version")" == "$want" ]]; then
    return 0
  fi
  go="$(go_bin)" || die "minio: Go is not installed (need Go >= 1.24 to build MinIO)"
  if [[ $want == latest ]]; then
    want="$("$go" list -m -f '{{.Version}}' "$MINIO_MODULE@latest")" || die "minio: cannot resolve $MINIO_MODULE@latest"
    if [[ -x $MINIO_BIN && -f $MINIO_BIN.version && "$(<"$MINIO_BIN.version")" == "$want" ]]; then
      return 0
    fi
  fi
  log "minio: building $MINIO_MODULE@$want with $("$go" version | awk '{print $3}') (first time only, takes minutes)"
  mkdir -p "$CACHE/bin"
  rm -f "$MINIO_BIN"
  GOBIN="$CACHE/bin" GOFLAGS=-buildvcs=false CGO_ENABLED=0 "$go" install "$MINIO_MODULE@$want"
  [[ -x $MINIO_BIN ]] || die "minio: go install finished but $MINIO_BIN is missing"
  echo "$want" >"$MINIO_BIN.version"
  log "minio: built $MINIO_MODULE@$want"
}

# start the build in the background so that it overlaps with the other services' start-up
minio_build_async() {
  if [[ -x $MINIO_BIN && -f $MINIO_BIN.version && "$(<"$MINIO_BIN.version")" == "$MINIO_VERSION" ]]; then
    return 0
  fi
  mkdir -p "$CACHE"
  log "minio: building in the background (log: ${MINIO_BUILD_LOG#"$ROOT"/})"
  minio_build >"$MINIO_BUILD_LOG" 2>&1 9>&- &
  MINIO_BUILD_PID=$!
}

minio_start() {
  if [[ -n $MINIO_BUILD_PID ]]; then
    log "minio: waiting for the build to finish"
    if ! wait "$MINIO_BUILD_PID"; then
      tail_logs "$MINIO_BUILD_LOG"
      die "minio: build failed"
    fi
    MINIO_BUILD_PID=""
  else
    minio_build
  fi
  have curl || apt_install curl
  mkdir -p "$MINIO_DIR"/{data,certs}
  if pid="$(svc_pid minio)"; then
    log "minio: already running (pid $pid)"
    return 0
  fi
  free_port minio "$MINIO_PORT"
  free_port minio "$MINIO_CONSOLE_PORT"
  start_bg minio "$MINIO_DIR/minio.log" \
    env MINIO_ROOT_USER="$MINIO_USER" MINIO_ROOT_PASSWORD="$MINIO_PASSWORD" \
    MINIO_UPDATE=off MINIO_CALLHOME_ENABLE=off MINIO_BROWSER_REDIRECT=off \
    "$MINIO_BIN" server --quiet --anonymous \
    --address "$HOST:$MINIO_PORT" --console-address "$HOST:$MINIO_CONSOLE_PORT" \
    --certs-dir "$MINIO_DIR/certs" "$MINIO_DIR/data"
  log "minio: started (pid $(<"$(pidfile minio)"))"
}

minio_ready() {
  curl -sf -o /dev/null --max-time 3 "http://$HOST:$MINIO_PORT/minio/health/live" &&
    curl -sf -o /dev/null --max-time 3 "http://$HOST:$MINIO_PORT/minio/health/ready"
}

minio_logs() { echo "$MINIO_DIR/minio.log"; }

# =============================================================================================
# PostgreSQL (Debian package; a private cluster run by the postgres user)

PG_DIR="$SVC/postgres"
PG_HOME=""  # where the cluster lives: $PG_DIR, or a fallback the postgres user can reach
PG_BINDIR=""

as_postgres() { setpriv --reuid=postgres --regid=postgres --init-groups -- "$@"; }

pg_setup_paths() {
  [[ -n $PG_BINDIR ]] && return 0
  local ver
  ver="$(find /usr/lib/postgresql -mindepth 1 -maxdepth 1 -printf '%f\n' 2>/dev/null | sort -V | tail -n 1)"
  [[ -n $ver && -x /usr/lib/postgresql/$ver/bin/postgres ]] || die "postgres: no server found under /usr/lib/postgresql"
  PG_BINDIR="/usr/lib/postgresql/$ver/bin"
  mkdir -p "$PG_DIR"
  chown postgres:postgres "$PG_DIR"
  if as_postgres test -w "$PG_DIR"; then
    PG_HOME="$PG_DIR"
  else
    # the repo sits where the postgres user cannot go (e.g. under /root): keep the cluster in
    # postgres' own home, one per checkout, and point to it from .services/postgres
    PG_HOME="/var/lib/postgresql/ackcrawl-$(printf '%s' "$ROOT" | sha1sum | cut -c1-12)"
    mkdir -p "$PG_HOME"
    chown postgres:postgres "$PG_HOME"
    ln -sfn "$PG_HOME" "$PG_DIR/cluster"
  fi
}

pg_start() {
  apt_install postgresql
  pg_setup_paths
  local data="$PG_HOME/data" run="$PG_HOME/run"
  mkdir -p "$run"
  chown postgres:postgres "$run"
  chmod 755 "$run"
  if pid="$(svc_pid postgres)"; then
    log "postgres: already running (pid $pid)"
    return 0
  fi
  if [[ ! -s $data/PG_VERSION ]]; then
    log "postgres: initdb $data"
    mkdir -p "$data"
    chown postgres:postgres "$data"
    chmod 700 "$data"
    (cd / && as_postgres "$PG_BINDIR/initdb" -D "$data" -U postgres -E UTF8 --locale=C \
      --auth-local=peer --auth-host=scram-sha-256) >"$PG_DIR/initdb.log" 2>&1 ||
      {
        tail_logs "$PG_DIR/initdb.log"
        die "postgres: initdb failed"
      }
  fi
  free_port postgres "$PG_PORT"
  start_bg postgres "$PG_DIR/postgres.log" \
    setpriv --reuid=postgres --regid=postgres --init-groups -- \
    "$PG_BINDIR/postgres" -D "$data" \
    -c listen_addresses="$HOST" -c port="$PG_PORT" -c unix_socket_directories="$run" \
    -c logging_collector=off -c max_connections=200
  log "postgres: started (pid $(<"$(pidfile postgres)"))"
}

pg_ready() {
  pg_isready -q -h "$HOST" -p "$PG_PORT" -t 2
}

# idempotent: role ackcrawl (password ackcrawl, may create databases for tests), database ackcrawl
pg_provision() {
  pg_setup_paths
  local psql=(as_postgres "$PG_BINDIR/psql" -X -q -v ON_ERROR_STOP=1 -h "$PG_HOME/run" -p "$PG_PORT" -d postgres)
  (cd / && "${psql[@]}" -c "DO \$\$ BEGIN
      IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$PG_USER') THEN
        CREATE ROLE $PG_USER LOGIN CREATEDB PASSWORD '$PG_PASSWORD';
      ELSE
        ALTER ROLE $PG_USER LOGIN CREATEDB PASSWORD '$PG_PASSWORD';
      END IF;
    END \$\$;") >&2 || die "postgres: could not create role $PG_USER"
  if [[ "$(cd / && "${psql[@]}" -tAc "SELECT 1 FROM pg_database WHERE datname = '$PG_DB'")" != 1 ]]; then
    (cd / && "${psql[@]}" -c "CREATE DATABASE $PG_DB OWNER $PG_USER") >&2 || die "postgres: could not create database $PG_DB"
  fi
  # the URL the project uses must work: password auth over TCP
  PGPASSWORD="$PG_PASSWORD" PGCONNECT_TIMEOUT=5 "$PG_BINDIR/psql" -X -q -tA -h "$HOST" -p "$PG_PORT" -U "$PG_USER" -d "$PG_DB" \
    -c 'SELECT 1' >/dev/null || die "postgres: cannot log in as $PG_USER over TCP"
}

pg_logs() { echo "$PG_DIR/postgres.log"; }

# =============================================================================================
# Broker clusters (`cluster-up`): 3 RabbitMQ nodes and 3 Kafka brokers on loopback, beside the
# single-node services above and independent of them (own ports, data dirs, cookie, cluster id).
# For the fault tests of test/broker-cluster/ and for trying a cluster setup on one machine.
#
#   RabbitMQ  ackc1..3@localhost, AMQP 5681-5683, Erlang distribution 25681-25683 (epmd 4369 is
#             shared), one cookie in .services/rabbitmq-cluster/home; joined with join_cluster.
#             Quorum queues get a member on every node (rabbit.quorum_cluster_size = 3, which
#             3.10 reads from advanced.config: it has no rabbitmq.conf key).
#   Kafka     KRaft, node ids 1..3, each broker+controller (3 voters), clients on 9192-9194,
#             controllers on 9195-9197, default.replication.factor=3, min.insync.replicas=2,
#             internal topics with 3 replicas (and min ISR 2).

CLUSTER_SIZE=3
RC_BASE_PORT=5681
KC_BASE_PORT=9192
KC_CONTROLLER_BASE_PORT=9195
RC_DIR="$SVC/rabbitmq-cluster"
KC_DIR="$SVC/kafka-cluster"
KAFKA_CLUSTER_HEAP="${KAFKA_CLUSTER_HEAP:--Xmx384m -Xms128m}"
CLUSTER_BROKERS=(rabbitmq kafka)

rc_name() { echo "rabbitmq-$1"; }        # the service name of node $1 (its .services/ dir, PID file)
rc_node() { echo "ackc$1@localhost"; }  # its Erlang node name
rc_port() { echo $((RC_BASE_PORT + $1 - 1)); }
kc_name() { echo "kafka-$1"; }
kc_port() { echo $((KC_BASE_PORT + $1 - 1)); }
kc_controller_port() { echo $((KC_CONTROLLER_BASE_PORT + $1 - 1)); }

# rc_env N: the environment of node N and of the CLI tools that talk to it, in RC_ENV
rc_env() {
  rabbit_node_env "$SVC/$(rc_name "$1")" "$(rc_node "$1")" "$(rc_port "$1")" "$RC_DIR/home" # one cookie for the cluster
  RC_ENV=("${NODE_ENV[@]}")
}

# rc_cli N TOOL ARGS...: a RabbitMQ CLI tool against node N
rc_cli() {
  local n="$1"
  rc_env "$n"
  env "${RC_ENV[@]}" "$RABBIT_BIN/$2" -q -n "$(rc_node "$n")" "${@:3}"
}

rc_start() {
  local n="$1" name dir pid
  name="$(rc_name "$n")"
  dir="$SVC/$name"
  apt_install rabbitmq-server
  mkdir -p "$RC_DIR/home" "$dir"/{mnesia,log}
  chmod 700 "$RC_DIR/home"
  if [[ ! -s $RC_DIR/home/.erlang.cookie ]]; then
    # one cookie for the three nodes and their CLI (Erlang would make one per HOME otherwise)
    head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' | tr 'a-f' 'A-F' >"$RC_DIR/home/.erlang.cookie"
    chmod 400 "$RC_DIR/home/.erlang.cookie"
  fi
  : >"$dir/rabbitmq-env.conf"
  echo '[].' >"$dir/enabled_plugins"
  # 3.10 has no rabbitmq.conf key for the initial quorum group size; its default is 3 as well,
  # stated here so that a change of default does not shrink the replication silently
  echo "[{rabbit, [{quorum_cluster_size, $CLUSTER_SIZE}]}]." >"$dir/advanced.config"
  cat >"$dir/rabbitmq.conf" <<EOF
# written by scripts/services.sh — node $n of the loopback cluster
listeners.tcp.1 = $HOST:$(rc_port "$n")
loopback_users.guest = true
log.file.level = info
log.console = false
EOF
  if pid="$(svc_pid "$name")"; then
    log "$name: already running (pid $pid)"
    return 0
  fi
  free_port "$name" "$(rc_port "$n")"
  free_port "$name" $(($(rc_port "$n") + 20000))
  rc_env "$n"
  start_bg "$name" "$dir/log/console.log" env "${RC_ENV[@]}" "$RABBIT_BIN/rabbitmq-server"
  log "$name: started $(rc_node "$n") (pid $(<"$(pidfile "$name")"))"
}

# node N answers AMQP and the CLI (for wait_ready, which calls its check without arguments)
RC_CHECK=1
rc_ready() {
  local reply port
  port="$(rc_port "$RC_CHECK")"
  reply="$(timeout 3 bash -c "exec 3<>/dev/tcp/$HOST/$port && printf 'AMQP\x00\x00\x09\x01' >&3 && head -c 7 <&3" 2>/dev/null | od -An -tx1 | tr -d ' \n')" || true
  [[ $reply == 0100000* ]] && rc_cli "$RC_CHECK" rabbitmq-diagnostics ping >/dev/null 2>&1
}

rc_logs() { echo "$SVC/$(rc_name "$1")/log/console.log" "$SVC/$(rc_name "$1")/log/$(rc_node "$1").log"; }

# the nodes that node $1 counts as running members of its cluster, one a line
rc_running_nodes() {
  rc_cli "$1" rabbitmqctl cluster_status --formatter json 2>/dev/null |
    grep -o '"running_nodes":\[[^]]*\]' | grep -o 'ackc[0-9]*@[A-Za-z0-9.-]*' || true
}

# node N (> 1) joins node 1's cluster, unless it is a member already
rc_join() {
  local n="$1" node first out
  node="$(rc_node "$n")"
  first="$(rc_node 1)"
  if rc_running_nodes 1 | grep -qx "$node"; then return 0; fi
  log "rabbitmq-$n: joining $node to $first"
  if ! out="$(rc_cli "$n" rabbitmqctl stop_app 2>&1 &&
    rc_cli "$n" rabbitmqctl reset 2>&1 &&
    rc_cli "$n" rabbitmqctl join_cluster "$first" 2>&1 &&
    rc_cli "$n" rabbitmqctl start_app 2>&1)"; then
    printf '%s\n' "$out" >&2
    # shellcheck disable=SC2046
    tail_logs $(rc_logs "$n")
    die "rabbitmq-$n: could not join $first"
  fi
  rc_running_nodes 1 | grep -qx "$node" || die "rabbitmq-$n: joined, but $first does not list $node as running"
}

rc_cluster_up() {
  local n
  for ((n = 1; n <= CLUSTER_SIZE; n++)); do rc_start "$n"; done
  for ((n = 1; n <= CLUSTER_SIZE; n++)); do
    RC_CHECK=$n
    # shellcheck disable=SC2046
    wait_ready "$(rc_name "$n")" rc_ready $(rc_logs "$n")
  done
  for ((n = 2; n <= CLUSTER_SIZE; n++)); do rc_join "$n"; done
  local running
  running="$(rc_running_nodes 1 | wc -l)"
  ((running == CLUSTER_SIZE)) || die "rabbitmq cluster: $running of $CLUSTER_SIZE nodes running"
}

# ---------------------------------------------------------------------------------------------

kc_java() {
  java -Xmx256m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC \
    -Dlog4j.configuration="file:$KC_DIR/tools-log4j.properties" \
    -cp "$KAFKA_LIBS/*" "$@"
}

kc_voters() {
  local n voters=()
  for ((n = 1; n <= CLUSTER_SIZE; n++)); do voters+=("$n@$HOST:$(kc_controller_port "$n")"); done
  (
    IFS=,
    echo "${voters[*]}"
  )
}

kc_start() {
  local n="$1" name dir pid
  name="$(kc_name "$n")"
  dir="$SVC/$name"
  kafka_fetch
  ensure_java
  mkdir -p "$KC_DIR" "$dir"/{data,logs}
  cat >"$dir/server.properties" <<EOF
# written by scripts/services.sh — KRaft node $n of the loopback cluster (broker+controller)
process.roles=broker,controller
node.id=$n
controller.quorum.voters=$(kc_voters)
listeners=PLAINTEXT://$HOST:$(kc_port "$n"),CONTROLLER://$HOST:$(kc_controller_port "$n")
advertised.listeners=PLAINTEXT://$HOST:$(kc_port "$n")
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=$dir/data
num.partitions=1
default.replication.factor=$CLUSTER_SIZE
min.insync.replicas=2
offsets.topic.replication.factor=$CLUSTER_SIZE
offsets.topic.num.partitions=10
transaction.state.log.replication.factor=$CLUSTER_SIZE
transaction.state.log.min.isr=2
transaction.state.log.num.partitions=10
unclean.leader.election.enable=false
auto.create.topics.enable=false
delete.topic.enable=true
group.initial.rebalance.delay.ms=0
num.network.threads=2
num.io.threads=2
log.retention.hours=168
log.segment.bytes=104857600
EOF
  kafka_log4j "$dir" "$dir/logs"
  kafka_tools_log4j "$KC_DIR"
  if pid="$(svc_pid "$name")"; then
    log "$name: already running (pid $pid)"
    return 0
  fi
  free_port "$name" "$(kc_port "$n")"
  free_port "$name" "$(kc_controller_port "$n")"
  if [[ ! -f $dir/data/meta.properties ]]; then
    # one cluster id for the three nodes, made once
    [[ -s $KC_DIR/cluster.id ]] || kc_java kafka.tools.StorageTool random-uuid >"$KC_DIR/cluster.id"
    log "$name: formatting storage (cluster id $(<"$KC_DIR/cluster.id"))"
    kc_java kafka.tools.StorageTool format --ignore-formatted \
      -t "$(<"$KC_DIR/cluster.id")" -c "$dir/server.properties" >"$dir/logs/format.log" 2>&1 ||
      {
        tail_logs "$dir/logs/format.log"
        die "$name: storage format failed"
      }
  fi
  # shellcheck disable=SC2086 # KAFKA_CLUSTER_HEAP is a list of JVM flags
  start_bg "$name" "$dir/logs/kafka.out" \
    java $KAFKA_CLUSTER_HEAP -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:+ExitOnOutOfMemoryError \
    -XX:TieredStopAtLevel=1 -Djava.awt.headless=true \
    -Dkafka.logs.dir="$dir/logs" \
    -Dlog4j.configuration="file:$dir/log4j.properties" \
    -cp "$KAFKA_LIBS/*" kafka.Kafka "$dir/server.properties"
  log "$name: started node $n (pid $(<"$(pidfile "$name")"))"
}

# the brokers that broker $1's metadata lists (registered and unfenced), one id a line
kc_brokers_seen() {
  timeout 60 java -Xmx256m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC \
    -Dlog4j.configuration="file:$KC_DIR/tools-log4j.properties" \
    -cp "$KAFKA_LIBS/*" kafka.admin.BrokerApiVersionsCommand \
    --bootstrap-server "$HOST:$(kc_port "$1")" 2>/dev/null | grep -o '(id: [0-9]*' | grep -o '[0-9]*$' | sort -u
}

KC_CHECK=1
kc_ready() { port_open "$(kc_port "$KC_CHECK")" && kc_brokers_seen "$KC_CHECK" | grep -qx "$KC_CHECK"; }

kc_logs() { echo "$SVC/$(kc_name "$1")/logs/kafka.out" "$SVC/$(kc_name "$1")/logs/server.log"; }

kc_cluster_up() {
  local n seen deadline
  for ((n = 1; n <= CLUSTER_SIZE; n++)); do kc_start "$n"; done
  for ((n = 1; n <= CLUSTER_SIZE; n++)); do
    KC_CHECK=$n
    # shellcheck disable=SC2046
    wait_ready "$(kc_name "$n")" kc_ready $(kc_logs "$n")
  done
  # every broker registered with the controller quorum, seen from the first one
  deadline=$((SECONDS + UP_TIMEOUT))
  while seen="$(kc_brokers_seen 1 | wc -l)" && ((seen < CLUSTER_SIZE)); do
    ((SECONDS < deadline)) || die "kafka cluster: $seen of $CLUSTER_SIZE brokers registered after ${UP_TIMEOUT}s"
    sleep 1
  done
}

# ---------------------------------------------------------------------------------------------

select_brokers() {
  SELECTED=()
  (($# == 0)) && SELECTED=("${CLUSTER_BROKERS[@]}") && return
  local s
  for s in "$@"; do
    case "$s" in
      rabbitmq | rabbit | amqp) SELECTED+=(rabbitmq) ;;
      kafka) SELECTED+=(kafka) ;;
      *) die "unknown broker cluster '$s' (known: ${CLUSTER_BROKERS[*]})" ;;
    esac
  done
}

# the service names of the nodes of broker cluster $1
cluster_nodes() {
  local n
  for ((n = 1; n <= CLUSTER_SIZE; n++)); do
    case "$1" in
      rabbitmq) rc_name "$n" ;;
      kafka) kc_name "$n" ;;
    esac
  done
}

cluster_url() {
  local n urls=()
  for ((n = 1; n <= CLUSTER_SIZE; n++)); do
    case "$1" in
      rabbitmq) urls+=("amqp://guest:guest@$HOST:$(rc_port "$n")") ;;
      kafka) urls+=("$HOST:$(kc_port "$n")") ;;
    esac
  done
  (
    IFS=,
    echo "${urls[*]}"
  )
}

cmd_cluster_up() {
  select_brokers "$@"
  lock
  local t0=$SECONDS s
  # start every node first, then wait: start-up overlaps
  if selected kafka; then
    kafka_fetch
    local n
    for ((n = 1; n <= CLUSTER_SIZE; n++)); do kc_start "$n"; done
  fi
  selected rabbitmq && rc_cluster_up
  selected kafka && kc_cluster_up
  log "broker clusters up in $((SECONDS - t0))s"
  for s in "${SELECTED[@]}"; do
    case "$s" in
      rabbitmq) printf '%-9s up  ACKCRAWL_AMQP_URL=%s  (nodes %s)\n' rabbitmq "$(cluster_url rabbitmq)" "$(rc_running_nodes 1 | tr '\n' ' ')" ;;
      kafka) printf '%-9s up  ACKCRAWL_KAFKA_BROKERS=%s  ACKCRAWL_KAFKA_REPLICATION_FACTOR=3\n' kafka "$(cluster_url kafka)" ;;
    esac
  done
}

cmd_cluster_down() {
  select_brokers "$@"
  lock
  local s name pid
  for s in "${SELECTED[@]}"; do
    if [[ $s == kafka ]]; then
      # together: a KRaft broker stopped last waits for a controller quorum that is gone
      stop_together $(cluster_nodes kafka)
      continue
    fi
    # the last node first: the first one, which the others joined, stops last
    for name in $(cluster_nodes "$s" | sort -r); do
      if pid="$(svc_pid "$name")"; then
        stop_pid "$name" "$pid" TERM
        printf '%-11s stopped\n' "$name"
      else
        printf '%-11s not running\n' "$name"
      fi
      rm -f "$(pidfile "$name")"
    done
  done
}

# stop_together NAME...: SIGTERM to every one at once, then as stop_pid for each
stop_together() {
  local name pid names=() pids=()
  for name in "$@"; do
    if pid="$(svc_pid "$name")"; then
      kill -TERM "$pid" 2>/dev/null || true
      names+=("$name")
      pids+=("$pid")
    else
      printf '%-11s not running\n' "$name"
      rm -f "$(pidfile "$name")"
    fi
  done
  local i
  for i in "${!names[@]}"; do
    stop_pid "${names[i]}" "${pids[i]}" TERM
    printf '%-11s stopped\n' "${names[i]}"
    rm -f "$(pidfile "${names[i]}")"
  done
}

cmd_cluster_status() {
  select_brokers "$@"
  local s name pid port all_up=0 n
  for s in "${SELECTED[@]}"; do
    n=0
    for name in $(cluster_nodes "$s"); do
      n=$((n + 1))
      case "$s" in
        rabbitmq) port="$(rc_port "$n")" ;;
        kafka) port="$(kc_port "$n")" ;;
      esac
      if pid="$(svc_pid "$name")" && port_open "$port"; then
        printf '%-11s up    pid %-7s 127.0.0.1:%s\n' "$name" "$pid" "$port"
      elif [[ -n ${pid:-} ]] && alive "$pid"; then
        printf '%-11s down  pid %-7s running but 127.0.0.1:%s does not answer\n' "$name" "$pid" "$port"
        all_up=1
      else
        printf '%-11s down\n' "$name"
        all_up=1
      fi
      pid=""
    done
    printf '%-11s %s\n' "$s" "$(cluster_url "$s")"
  done
  return "$all_up"
}

# one node, by service name (rabbitmq-2, kafka-3)
cluster_node_arg() {
  [[ $1 =~ ^(rabbitmq|kafka)-[1-9][0-9]*$ ]] && ((${1##*-} <= CLUSTER_SIZE)) ||
    die "a cluster node is rabbitmq-N or kafka-N with N in 1..$CLUSTER_SIZE, got '${1:-}'"
}

# stop one node gracefully (SIGTERM); `cluster-up` starts it again
cmd_cluster_stop() {
  cluster_node_arg "${1:-}"
  lock
  local pid
  if pid="$(svc_pid "$1")"; then
    stop_pid "$1" "$pid" TERM
    printf '%-11s stopped\n' "$1"
  else
    printf '%-11s not running\n' "$1"
  fi
  rm -f "$(pidfile "$1")"
}

cmd_cluster_pid() {
  cluster_node_arg "${1:-}"
  svc_pid "$1" || die "$1 is not running"
}

# a RabbitMQ CLI tool against the first running node: cluster-rabbitmqctl [TOOL] ARGS...
cmd_cluster_rabbitmqctl() {
  local tool=rabbitmqctl n
  case "${1:-}" in rabbitmq-queues | rabbitmq-diagnostics | rabbitmqctl) tool="$1" && shift ;; esac
  for ((n = 1; n <= CLUSTER_SIZE; n++)); do
    if svc_pid "$(rc_name "$n")" >/dev/null; then
      rc_cli "$n" "$tool" "$@"
      return
    fi
  done
  die "no node of the rabbitmq cluster is running"
}

# rabbitmqctl against the single node of `up`: rabbitmqctl ARGS...
cmd_rabbitmqctl() {
  svc_pid rabbitmq >/dev/null || die "rabbitmq is not running (scripts/services.sh up rabbitmq)"
  rabbit_cli rabbitmqctl "$@"
}

# =============================================================================================
# commands

url_of() {
  case "$1" in
    rabbitmq) echo "amqp://guest:guest@$HOST:$RABBITMQ_PORT" ;;
    kafka) echo "$HOST:$KAFKA_PORT  (PLAINTEXT, Kafka $KAFKA_VERSION KRaft; controller $HOST:$KAFKA_CONTROLLER_PORT)" ;;
    minio) echo "http://$HOST:$MINIO_PORT  (access key $MINIO_USER, secret $MINIO_PASSWORD; console http://$HOST:$MINIO_CONSOLE_PORT)" ;;
    postgres) echo "postgres://$PG_USER:$PG_PASSWORD@$HOST:$PG_PORT/$PG_DB" ;;
  esac
}

main_port() {
  case "$1" in
    rabbitmq) echo "$RABBITMQ_PORT" ;;
    kafka) echo "$KAFKA_PORT" ;;
    minio) echo "$MINIO_PORT" ;;
    postgres) echo "$PG_PORT" ;;
  esac
}

select_services() {
  SELECTED=()
  if (($# == 0)); then
    SELECTED=("${ALL_SERVICES[@]}")
    return
  fi
  local s
  for s in "$@"; do
    case "$s" in
      rabbitmq | kafka | minio | postgres) SELECTED+=("$s") ;;
      rabbit | amqp) SELECTED+=(rabbitmq) ;;
      postgresql | pg) SELECTED+=(postgres) ;;
      s3) SELECTED+=(minio) ;;
      *) die "unknown service '$s' (known: ${ALL_SERVICES[*]})" ;;
    esac
  done
}

selected() {
  local s
  for s in "${SELECTED[@]}"; do [[ $s == "$1" ]] && return 0; done
  return 1
}

lock() {
  mkdir -p "$SVC"
  exec 9>"$SVC/.lock"
  flock -w 900 9 || die "another scripts/services.sh is still running (lock $SVC/.lock)"
}

# Debian's Chromium, which render crawlers drive through playwright-core (never a downloaded browser)
ensure_chromium() {
  [[ -x /usr/bin/chromium ]] && return 0
  apt_install chromium
  [[ -x /usr/bin/chromium ]] || die "chromium: installed, but /usr/bin/chromium is missing"
  log "chromium: $(/usr/bin/chromium --version 2>/dev/null)"
}

cmd_up() {
  select_services "$@"
  lock
  local t0=$SECONDS s
  ensure_chromium
  selected minio && minio_build_async
  # start everything first, then wait for each: start-up overlaps
  selected rabbitmq && rabbit_start
  selected kafka && kafka_start
  selected postgres && pg_start
  selected minio && minio_start
  for s in "${SELECTED[@]}"; do
    case "$s" in
      rabbitmq)
        # shellcheck disable=SC2046
        wait_ready rabbitmq rabbit_ready $(rabbit_logs)
        ;;
      kafka)
        # shellcheck disable=SC2046
        wait_ready kafka kafka_ready $(kafka_logs)
        ;;
      minio)
        # shellcheck disable=SC2046
        wait_ready minio minio_ready $(minio_logs)
        ;;
      postgres)
        # shellcheck disable=SC2046
        wait_ready postgres pg_ready $(pg_logs)
        pg_provision
        ;;
    esac
  done
  log "all up in $((SECONDS - t0))s"
  for s in "${SELECTED[@]}"; do
    printf '%-9s up  %s\n' "$s" "$(url_of "$s")"
  done
}

cmd_down() {
  select_services "$@"
  lock
  local s pid i order=()
  # stop in the reverse order of start
  for ((i = ${#SELECTED[@]} - 1; i >= 0; i--)); do order+=("${SELECTED[i]}"); done
  for s in "${order[@]}"; do
    if pid="$(svc_pid "$s")"; then
      case "$s" in
        postgres) stop_pid "$s" "$pid" INT ;;  # fast shutdown
        *) stop_pid "$s" "$pid" TERM ;;
      esac
      printf '%-9s stopped\n' "$s"
    else
      printf '%-9s not running\n' "$s"
    fi
    rm -f "$(pidfile "$s")"
  done
}

cmd_status() {
  select_services "$@"
  local s pid port all_up=0
  for s in "${SELECTED[@]}"; do
    port="$(main_port "$s")"
    if pid="$(svc_pid "$s")"; then
      if port_open "$port"; then
        printf '%-9s up    pid %-7s %s\n' "$s" "$pid" "$(url_of "$s")"
      else
        printf '%-9s down  pid %-7s running but 127.0.0.1:%s does not answer (starting?)\n' "$s" "$pid" "$port"
        all_up=1
      fi
    else
      if port_open "$port"; then
        printf '%-9s down  (127.0.0.1:%s is held by another process: pid(s) %s)\n' "$s" "$port" "$(port_owners "$port")"
      else
        printf '%-9s down\n' "$s"
      fi
      all_up=1
    fi
  done
  return "$all_up"
}

usage() {
  sed -n '2,20p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
}

main() {
  local cmd="${1:-}"
  (($#)) && shift
  case "$cmd" in
    up) cmd_up "$@" ;;
    down | stop) cmd_down "$@" ;;
    status) cmd_status "$@" ;;
    cluster-up) cmd_cluster_up "$@" ;;
    cluster-down) cmd_cluster_down "$@" ;;
    cluster-status) cmd_cluster_status "$@" ;;
    cluster-stop) cmd_cluster_stop "$@" ;;
    cluster-pid) cmd_cluster_pid "$@" ;;
    cluster-rabbitmqctl) cmd_cluster_rabbitmqctl "$@" ;;
    rabbitmqctl) cmd_rabbitmqctl "$@" ;;
    -h | --help | help)
      usage
      ;;
    *)
      usage >&2
      exit 2
      ;;
  esac
}

main "$@"
