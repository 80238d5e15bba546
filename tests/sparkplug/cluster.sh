#!/usr/bin/env bash
# The Sparkplug edge node of `takt run` on a clustered broker: a 3-node RabbitMQ cluster (Debian's
# rabbitmq-server with its MQTT plugin and `mqtt.sparkplug = true`) on loopback, started here with
# node names, ports, Erlang cookie and epmd of its own, then cluster.mjs: many `takt run` edge
# nodes spread over the three brokers, a Sparkplug host application on the first, and the second
# broker killed (kill -9) under them. Everything started here is ended on exit, pass or fail.
# Exit code 77 (ctest's SKIP_RETURN_CODE) when rabbitmq-server is not installed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
rabbit_bin=${TAKT_RABBITMQ_BIN:-/usr/lib/rabbitmq/bin}
if [ ! -x "$rabbit_bin/rabbitmq-server" ] || [ ! -x "$rabbit_bin/rabbitmqctl" ]; then
  echo "tests/sparkplug/cluster.sh skipped: rabbitmq-server is not installed (scripts/setup.sh installs it)"
  exit 77
fi
node_bin=${TAKT_NODE_BIN:-node}
started=$SECONDS

work=$(mktemp -d "${TMPDIR:-/tmp}/takt-sp-cluster-XXXXXX")
declare -a wrappers=()
epmd_pid=""
host_pid=""
teardown() {
  local rc=$?
  trap - EXIT INT TERM
  if [ -n "$host_pid" ]; then kill -9 "$host_pid" 2>/dev/null || true; fi
  # The takt runs cluster.mjs started (it ends them itself; these are the ones it could not).
  if [ -f "$work/takt.pids" ]; then
    while read -r pid; do
      if [ -r "/proc/$pid/cmdline" ] && tr '\0' ' ' < "/proc/$pid/cmdline" | grep -q "$work"; then
        kill -9 "$pid" 2>/dev/null || true
      fi
    done < "$work/takt.pids"
  fi
  for i in 1 2 3; do
    if [ -s "$work/n$i/pid" ]; then kill -9 "$(cat "$work/n$i/pid")" 2>/dev/null || true; fi
  done
  for pid in "${wrappers[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
  if [ -n "$epmd_pid" ]; then kill -9 "$epmd_pid" 2>/dev/null || true; fi
  wait 2>/dev/null || true
  if [ "$rc" -ne 0 ]; then
    for i in 1 2 3; do
      echo "--- rabbit$i log (last lines)"
      tail -n 15 "$work/n$i/log/rabbit$i@localhost.log" "$work/n$i/out.log" 2>/dev/null || true
    done
  fi
  rm -rf "$work"
  echo "cluster test: ${SECONDS}s in all (exit $rc)"
  exit "$rc"
}
trap teardown EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Free loopback ports: epmd, and per node AMQP, Erlang distribution and MQTT.
mapfile -t ports < <("$node_bin" -e '
const net = require("node:net");
const servers = [];
(async () => {
  for (let i = 0; i < 10; ++i) {
    const s = net.createServer();
    await new Promise((r) => s.listen(0, "127.0.0.1", r));
    servers.push(s);
  }
  for (const s of servers) console.log(s.address().port);
  for (const s of servers) s.close();
})();')
export ERL_EPMD_PORT=${ports[0]} ERL_EPMD_ADDRESS=127.0.0.1
export HOME=$work/home
mkdir -p "$HOME"
# The cluster's shared Erlang cookie (nodes and rabbitmqctl read it from $HOME).
head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$HOME/.erlang.cookie"
chmod 400 "$HOME/.erlang.cookie"
# The cluster's own epmd (Erlang's port mapper) on its own port, in the foreground so that it is
# ended by its pid: the nodes and rabbitmqctl find it through ERL_EPMD_PORT and start none.
epmd -port "$ERL_EPMD_PORT" -address 127.0.0.1 &
epmd_pid=$!
for _ in $(seq 50); do
  epmd -port "$ERL_EPMD_PORT" -names > /dev/null 2>&1 && break
  sleep 0.1
done
echo '[rabbitmq_mqtt].' > "$work/enabled_plugins"
: > "$work/rabbitmq-env.conf"
ctl() { "$rabbit_bin/rabbitmqctl" -n "rabbit$1@localhost" "${@:2}"; }

mqtt_ports=()
for i in 1 2 3; do
  d=$work/n$i
  amqp=${ports[$((3 * i - 2))]} dist=${ports[$((3 * i - 1))]} mqtt=${ports[$((3 * i))]}
  mqtt_ports+=("$mqtt")
  mkdir -p "$d"
  cat > "$d/rabbitmq.conf" <<EOF
listeners.tcp.default = 127.0.0.1:$amqp
mqtt.listeners.tcp.default = 127.0.0.1:$mqtt
# spBv1.0/... topics: the '.' of the namespace is not a topic level separator here.
mqtt.sparkplug = true
mqtt.allow_anonymous = true
log.console = false
log.file.level = warning
EOF
  (
    export RABBITMQ_NODENAME="rabbit$i@localhost" RABBITMQ_NODE_PORT=$amqp RABBITMQ_DIST_PORT=$dist \
           RABBITMQ_CONFIG_FILE=$d/rabbitmq.conf RABBITMQ_ADVANCED_CONFIG_FILE=$d/advanced.config \
           RABBITMQ_ENABLED_PLUGINS_FILE=$work/enabled_plugins RABBITMQ_CONF_ENV_FILE=$work/rabbitmq-env.conf \
           RABBITMQ_MNESIA_BASE=$d/mnesia RABBITMQ_LOG_BASE=$d/log RABBITMQ_PID_FILE=$d/pid \
           RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS="-kernel inet_dist_use_interface {127,0,0,1}"
    exec "$rabbit_bin/rabbitmq-server" > "$d/out.log" 2>&1
  ) &
  wrappers+=("$!")
done
for i in 1 2 3; do
  timeout 90 "$rabbit_bin/rabbitmqctl" -n "rabbit$i@localhost" wait "$work/n$i/pid" --timeout 80 > /dev/null
done
echo "cluster test: 3 RabbitMQ nodes up after $((SECONDS - started))s (MQTT on ${mqtt_ports[*]})"
for i in 2 3; do
  ctl "$i" stop_app > /dev/null
  ctl "$i" join_cluster rabbit1@localhost > /dev/null
  ctl "$i" start_app > /dev/null
done
running=$(ctl 1 cluster_status --formatter json | "$node_bin" -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).running_nodes.sort().join(",")))')
if [ "$running" != "rabbit1@localhost,rabbit2@localhost,rabbit3@localhost" ]; then
  echo "cluster test: the cluster did not form: running nodes $running"
  exit 1
fi
echo "cluster test: cluster of $running after $((SECONDS - started))s"

# In the background and waited for: bash runs the INT/TERM traps only between commands, and
# `wait` is one it leaves for them.
TAKT_CLUSTER_WORK=$work TAKT_CLUSTER_MQTT_PORTS="${mqtt_ports[*]}" \
TAKT_CLUSTER_BROKER_PIDS="$(cat "$work/n1/pid") $(cat "$work/n2/pid") $(cat "$work/n3/pid")" \
  "$node_bin" "$here/cluster.mjs" &
host_pid=$!
wait "$host_pid"
