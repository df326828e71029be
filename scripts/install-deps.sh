#!/usr/bin/env bash
# Installs what a fresh Debian machine lacks to build scenesync (`run`), to package it (`pkg`: make install, make deb)
# or to build, package and test it (`test`), or to run the benchmark beside its peers (`bench`), or to build and check
# the GTK example app (`gtk`: make check-gtk).
# Idempotent: packages already present are not fetched again.
set -euo pipefail
mode=${1:-run}
packages=(libsystemd-dev pkg-config)
if [ "$mode" = test ]; then
    # systemd-analyze and systemd-socket-activate (systemd), systemd-nspawn (systemd-container),
    # jq for checking the CLI's --json output, socat for talking to the socket by hand (docs/cli.md).
    packages+=(systemd systemd-container jq socat)
    # The packaging tests: lintian checks the .deb, man-db renders the man pages (man -l), and dbus is the bus the
    # booted containers need for logind and a user's systemd instance.
    packages+=(lintian man-db dbus)
    # Replication tests (§9): a private PostgreSQL cluster (initdb, pg_ctl) per test run, and openssl for the
    # certificates of the TLS tests (a CA and a server certificate made per test).
    packages+=(postgresql openssl)
fi
if [ "$mode" = bench ]; then
    # The peers of `scenesync-bench --peers` (docs/benchmarks.md): Redis pub/sub and RDB, watchman's subscriptions,
    # and PostgreSQL for `scenesync-bench cluster`. The bench starts each on private sockets and temp dirs; the
    # services the packages install are not used.
    packages+=(redis-server watchman postgresql)
fi
if [ "$mode" = gtk ]; then
    # Examples/GtkRecipes links GTK 4; scripts/check-gtk.sh runs two copies of it on a private X server (Xvfb),
    # drives and reads their windows with xdotool, and takes the screenshot with ImageMagick's `import`.
    packages+=(libgtk-4-dev xvfb xdotool imagemagick)
fi
if [ "$mode" = pkg ] || [ "$mode" = test ]; then
    # strip (binutils), dpkg-shlibdeps (dpkg-dev) and dpkg-deb for make deb.
    packages+=(binutils dpkg-dev)
fi
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    echo "installing: ${missing[*]}" >&2
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The test suite runs in parallel: dozens of daemons, each with an inotify instance, beside systemd containers
# (whose systemd, journald and udev hold several more each), all as root. Debian's default of 128 instances per user
# is then too few; raise it for the run where we may (root), and say so.
if [ "$mode" = test ] && [ "$(id -u)" -eq 0 ]; then
    current=$(cat /proc/sys/fs/inotify/max_user_instances 2>/dev/null || echo 0)
    if [ "$current" -lt 1024 ]; then
        echo "raising fs.inotify.max_user_instances from $current to 1024 for the parallel test run" >&2
        sysctl -qw fs.inotify.max_user_instances=1024 || true
    fi
fi
