#!/usr/bin/env bash
# Installs takt's build and test dependencies from Debian packages. Idempotent: quiet and fast
# when everything is already there; installs only what is missing.
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache pkg-config git
  clang clang-format clang-tidy libclang-rt-14-dev
  libasio-dev libboost1.74-dev rapidjson-dev libtomlplusplus-dev libcli11-dev libfmt-dev libspdlog-dev
  libgtest-dev libgmock-dev libbenchmark-dev liblua5.4-dev
  libmodbus-dev libmosquitto-dev libgpiod-dev libssl-dev openssl libsystemd-dev zlib1g-dev libcpp-httplib-dev
  libprotobuf-c-dev protobuf-c-compiler libpugixml-dev
  python3 valgrind llvm-14-dev
  mosquitto socat python3-pymodbus python3-serial python3-serial-asyncio
  chromium rabbitmq-server
)
# chromium: the browser tests of the live page (tests/web) drive Debian's build headless.
# rabbitmq-server: the clustered-broker test of the Sparkplug edge node (tests/sparkplug/cluster.sh)
# starts a 3-node cluster of its own from the package's programs; the packaged system instance is
# stopped and disabled right after the install (below).
# Node.js and npm for the web page's build (web/), the OPC UA server (opcua/) and for the
# language-server, grammar, OPC UA and browser tests: Debian's packages when the machine has none. A Node.js that ships its own npm
# (the nodesource package) is kept: Debian's npm package cannot be installed beside it.
if ! command -v node >/dev/null 2>&1; then
  packages+=(nodejs)
fi
if ! command -v npm >/dev/null 2>&1; then
  packages+=(npm)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "setup: installing ${missing[*]}" >&2
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
# The package's postinst starts and enables a system RabbitMQ (rabbit@<host> on 5672/25672, its
# own cookie) where systemd runs: nothing here uses it, and a broker idling on a test machine only
# takes memory and ports. Stopped and disabled once, when the package comes in.
if printf '%s\n' "${missing[@]}" | grep -qx rabbitmq-server; then
  if [ -d /run/systemd/system ]; then
    $SUDO systemctl disable --now rabbitmq-server.service >/dev/null 2>&1 || true
  else
    $SUDO invoke-rc.d rabbitmq-server stop >/dev/null 2>&1 || true
  fi
fi
