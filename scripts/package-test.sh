#!/usr/bin/env bash
# The package round trip a new box goes through (docs/install.md), on this machine as root:
# dpkg -i the .deb from dist/ (or the one given), check what it installed and that the service is
# enabled but not started, run the installed takt as the user takt on the installed project for a
# few seconds the way takt.service does, read its status through the installed socket path, then
# dpkg -r and check that only conffiles (/etc/takt) and state (/var/lib/takt) are left. Ends with
# a purge so the machine is as before. Any failed check exits 1. With the add-on takt-native beside
# the .deb: takt alone says the add-on is missing when native is asked for and runs on the
# interpreter; with takt-native installed the same run is native; dpkg -r takt-native removes it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
deb=${1:-$(ls -t "$root"/dist/takt_*_"$(dpkg --print-architecture)".deb 2>/dev/null | head -1)}
[ -n "$deb" ] && [ -f "$deb" ] || { echo "package-test: no .deb (run scripts/package.sh)" >&2; exit 1; }
native_deb=$(ls "$(dirname "$deb")/$(basename "$deb" | sed 's/^takt_/takt-native_/')" 2>/dev/null || true)
[ "$(id -u)" -eq 0 ] || { echo "package-test: run as root (it installs the package)" >&2; exit 1; }
if dpkg-query -W -f='${Status}' takt 2>/dev/null | grep -q "installed"; then
  echo "package-test: takt is already installed; remove it first" >&2
  exit 1
fi
# A failed check still leaves the machine as it was: the run stopped, the package purged.
pid=""
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  dpkg-query -W -f='${Status}' takt-native 2>/dev/null | grep -q "installed\|config-files" && dpkg --purge takt-native >/dev/null
  dpkg-query -W -f='${Status}' takt 2>/dev/null | grep -q "installed\|config-files" && dpkg --purge takt >/dev/null
  rm -rf /run/takt
}
fail() { echo "package-test: FAIL: $*" >&2; cleanup; exit 1; }
ok() { echo "package-test: ok: $*"; }

# Everything outside the package database, logs and scratch space, before and after.
snapshot() {
  find / -xdev \( -path /proc -o -path /sys -o -path /dev -o -path /tmp -o -path /var/tmp -o -path /run \
      -o -path /var/lib/dpkg -o -path /var/log -o -path /var/cache -o -path /root -o -path /home \
      -o -path /work -o -path /var/lib/apt \) -prune -o -print 2>/dev/null | sort
}
before=$(mktemp)
after=$(mktemp)
trap 'rm -f "$before" "$after"' EXIT
snapshot >"$before"

echo "package-test: dpkg -i $deb"
# dpkg does not fetch dependencies: a box without them gets them from apt afterwards.
dpkg -i "$deb" >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get -f install -y -qq >/dev/null
for f in /usr/bin/takt /usr/share/takt/boards/raspberry-pi-4.toml /usr/share/takt/examples/demo/runtime.toml \
         /usr/share/takt/opcua/server.js \
         /lib/systemd/system/takt.service /lib/systemd/system/takt@.service /etc/takt/project/runtime.toml \
         /usr/share/doc/takt/copyright /lib/udev/rules.d/60-takt.rules; do
  [ -e "$f" ] || fail "$f not installed"
done
[ -d /usr/share/takt/opcua/node_modules/node-opcua ] || fail "the OPC UA server's npm packages are not installed"
dpkg-deb -f "$deb" Recommends | grep -q "nodejs (>= 18)" || fail "the package does not recommend nodejs (>= 18)"
getent passwd takt >/dev/null || fail "no user takt"
[ "$(stat -c %U /var/lib/takt)" = takt ] || fail "/var/lib/takt is not owned by takt"
[ -L /etc/systemd/system/multi-user.target.wants/takt.service ] || fail "takt.service is not enabled"
[ -e /run/takt/takt.sock ] && fail "the package started takt"
if [ -c /dev/cpu_dma_latency ]; then
  [ "$(stat -c %G:%a /dev/cpu_dma_latency)" = takt:660 ] || fail "/dev/cpu_dma_latency is not writable by the group takt"
fi
ok "installed, user takt, takt.service enabled and not started"

# The installed binary finds the installed boards, not a build tree's.
cd /
env -u TAKT_BOARDS_DIR /usr/bin/takt boards | grep -q raspberry-pi-4 || fail "takt boards"
/usr/bin/takt validate --project /etc/takt/project >/dev/null || fail "takt validate /etc/takt/project"
ok "takt boards and takt validate on the installed project"

# What takt.service does (ExecStart as the user takt, RuntimeDirectory=takt), without systemd.
install -d -o takt -g takt -m 0755 /run/takt
log=$(mktemp)
exec_start=$(sed -n 's/^ExecStart=//p' /lib/systemd/system/takt.service)
# shellcheck disable=SC2086 # the unit's command line, split as systemd splits it
setpriv --reuid=takt --regid=takt --init-groups $exec_start --for 6s >"$log" 2>&1 &
pid=$!
for _ in $(seq 50); do
  [ -S /run/takt/takt.sock ] && break
  sleep 0.1
done
[ -S /run/takt/takt.sock ] || { cat "$log"; fail "no control socket /run/takt/takt.sock"; }
status=$(/usr/bin/takt ctl --endpoint unix:///run/takt/takt.sock runtime.status) || { cat "$log"; fail "takt ctl status"; }
echo "$status" | grep -q '"state":"running"' || fail "status is not running: $status"
wait "$pid" || { rc=$?; pid=""; cat "$log"; fail "takt run exited with $rc"; }
pid=""
grep -q "stopped" "$log" || { cat "$log"; fail "takt run did not stop cleanly"; }
[ -f /var/lib/takt/.takt/audit.log ] || fail "no control audit log in /var/lib/takt/.takt"
rm -f "$log"
ok "installed takt ran /etc/takt/project as takt; status over /run/takt/takt.sock: $(echo "$status" | head -c 120)"
rm -rf /run/takt

# The native tier: asked for without the add-on, then with it (as root: only the log matters).
native_run() {
  install -d -o takt -g takt -m 0755 /run/takt
  local state
  state=$(mktemp -d)
  /usr/bin/takt run --project /etc/takt/project --state-dir "$state" --execution native --for 2s 2>&1 || true
  rm -rf "$state" /run/takt
}
[ -e /usr/lib/"$(dpkg-architecture -qDEB_HOST_MULTIARCH)"/takt/takt-native.so ] && fail "takt installed the native tier"
out=$(native_run)
echo "$out" | grep -q "execution: interpreter (native: the native tier add-on is not installed" \
  || fail "takt without takt-native did not name the missing add-on: $out"
echo "$out" | grep -q "stopped" || fail "takt without takt-native did not run on the interpreter: $out"
ok "without takt-native, --execution native names the missing add-on and runs on the interpreter"
if [ -n "$native_deb" ]; then
  echo "package-test: dpkg -i $native_deb"
  dpkg -i "$native_deb" >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get -f install -y -qq >/dev/null
  dpkg-deb -f "$native_deb" Depends | grep -q libllvm14 || fail "takt-native does not depend on libllvm14"
  out=$(native_run)
  echo "$out" | grep -q "execution: native (compiled in" || fail "takt-native installed, still not native: $out"
  ok "with takt-native the demo runs native"
  dpkg -r takt-native >/dev/null
  [ -e /usr/lib/"$(dpkg-architecture -qDEB_HOST_MULTIARCH)"/takt ] && fail "dpkg -r takt-native left its directory"
  ok "dpkg -r takt-native removed the add-on"
fi

echo "package-test: dpkg -r takt"
dpkg -r takt >/dev/null
[ "$(dpkg-query -W -f='${db:Status-Status}' takt)" = config-files ] || fail "takt is not in state config-files"
snapshot >"$after"
left=$(comm -13 "$before" "$after" | grep -v -E '^/etc/takt(/|$)|^/var/lib/takt(/|$)|^/var/lib/systemd/deb-systemd-helper' || true)
[ -z "$left" ] || fail "left behind after dpkg -r: $left"
gone=$(comm -23 "$before" "$after" || true)
[ -z "$gone" ] || fail "missing after dpkg -r: $gone"
[ -f /etc/takt/project/runtime.toml ] || fail "conffiles removed by dpkg -r"
if [ -c /dev/cpu_dma_latency ]; then
  [ "$(stat -c %G:%a /dev/cpu_dma_latency)" = root:600 ] || fail "dpkg -r left /dev/cpu_dma_latency to the group takt"
fi
ok "dpkg -r left only conffiles (/etc/takt) and state (/var/lib/takt)"

dpkg --purge takt >/dev/null
[ ! -e /etc/takt/project ] && [ ! -e /var/lib/takt ] || fail "purge left /etc/takt/project or /var/lib/takt"
ok "dpkg --purge removed them"
