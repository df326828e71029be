#!/usr/bin/env bash
# Installs what a fresh Debian machine lacks to build scenesync (`run`) or to build and test it (`test`).
# Idempotent: packages already present are not fetched again.
set -euo pipefail
mode=${1:-run}
packages=(libsystemd-dev pkg-config)
if [ "$mode" = test ]; then
    # systemd-analyze and systemd-socket-activate (systemd), systemd-nspawn (systemd-container),
    # jq for checking the CLI's --json output, socat for the README walk-through.
    packages+=(systemd systemd-container jq socat)
fi
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "installing: ${missing[*]}" >&2
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
