#!/usr/bin/env bash
# Usage: scripts/debian-node18.sh DIR
# Unpacks Debian 12's own Node.js 18 (nodejs, libnode108, the libraries it links and the modules
# it loads from /usr/share/nodejs) into DIR without installing anything, and writes DIR/bin/node,
# which runs it. The OPC UA server is tested on it (tests/opcua/debian-node18.sh): the Node.js a
# Debian 12 box gets from `apt install nodejs`, on a machine whose own `node` may be another.
# Debian's libnode loads some of its modules from /usr/share/nodejs, a path built into it: the
# test lays DIR/usr/share over /usr/share in a mount namespace of its own.
set -euo pipefail
dir=${1:?usage: debian-node18.sh DIR}
[ -x "$dir/bin/node" ] && "$dir/bin/node" --version >/dev/null 2>&1 && exit 0

# Debian 12's version, not the candidate: a machine with NodeSource's nodejs prefers that one.
debian_version() { apt-cache madison nodejs | awk -F'|' '$2 ~ /^ *18\./ && $3 ~ /bookworm/ {gsub(/ /, "", $2); print $2; exit}'; }
version=$(debian_version)
if [ -z "$version" ]; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  version=$(debian_version)
fi
[ -n "$version" ] || { echo "debian-node18: apt knows no Debian 12 nodejs 18" >&2; exit 1; }

rm -rf "$dir"
mkdir -p "$dir/debs" "$dir/bin"
# apt-get download writes into the current directory as the _apt user when it can: a folder it
# may write to avoids the warning that it could not.
chmod 0777 "$dir/debs"
(cd "$dir/debs" && apt-get download -qq "nodejs=$version" "libnode108=$version" node-acorn node-cjs-module-lexer \
  node-undici libuv1 libc-ares2 libbrotli1 libnghttp2-14 libicu72)
for deb in "$dir"/debs/*.deb; do
  dpkg-deb -x "$deb" "$dir"
done
rm -rf "$dir/debs"
libs=$dir/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)
cat >"$dir/bin/node" <<EOF
#!/bin/sh
LD_LIBRARY_PATH=$libs exec $dir/usr/bin/node "\$@"
EOF
chmod +x "$dir/bin/node"
"$dir/bin/node" --version
