#!/usr/bin/env bash
# Turns a tree that `make install` laid out in Debian's directories into a .deb (`make deb` calls this):
#   scripts/build-deb.sh ROOT VERSION ARCH OUTPUT [XZ_LEVEL]
# It strips the binaries and compresses the man pages and documentation as debhelper would, adds the copyright
# file, changelog.Debian.gz, the lintian overrides and DEBIAN/ (control with Depends: from dpkg-shlibdeps,
# conffiles, md5sums, maintainer scripts from packaging/deb), then runs dpkg-deb --root-owner-group.
set -euo pipefail
root=$(cd "$1" && pwd) version=$2 arch=$3 output=$4 xz_level=${5:-6}
packaging=$(cd "$(dirname "$0")/../packaging/deb" && pwd)
umask 022

# packaging/deb/changelog names the version; the binaries must report the same upstream part.
upstream=${version%-*}
for binary in usr/sbin/scenesyncd usr/bin/scenesync; do
    reported=$("$root/$binary" --version)
    reported=${reported#* }  # `scenesyncd 0.1.0`, `scenesync 0.1.0`
    if [ "$reported" != "$upstream" ]; then
        echo "build-deb: $binary reports version '$reported', packaging/deb/changelog says '$version'" >&2
        exit 1
    fi
done

strip --remove-section=.comment --remove-section=.note "$root/usr/sbin/scenesyncd" "$root/usr/bin/scenesync"
gzip -9n "$root"/usr/share/man/man*/*.[18]
doc=$root/usr/share/doc/scenesync
gzip -9n "$doc/README.md"
install -m 0644 "$packaging/copyright" "$doc/copyright"
gzip -9n -c "$packaging/changelog" > "$doc/changelog.Debian.gz"
chmod 0644 "$doc/changelog.Debian.gz"
install -d "$root/usr/share/lintian/overrides"
install -m 0644 "$packaging/lintian-overrides" "$root/usr/share/lintian/overrides/scenesync"

install -d -m 0755 "$root/DEBIAN"

# Depends: the shared libraries the binaries load (libc6, libgcc-s1, libstdc++6, libsystemd0…), with the
# versions their symbols need. dpkg-shlibdeps wants a debian/control and the tree at debian/<package>.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/debian"
printf 'Source: scenesync\n\nPackage: scenesync\nArchitecture: any\n' > "$work/debian/control"
ln -s "$root" "$work/debian/scenesync"
depends=$(cd "$work" && dpkg-shlibdeps -O debian/scenesync/usr/sbin/scenesyncd debian/scenesync/usr/bin/scenesync)
depends=${depends#shlibs:Depends=}
[ -n "$depends" ] || { echo "build-deb: dpkg-shlibdeps found no dependencies" >&2; exit 1; }

for script in postinst prerm postrm; do install -m 0755 "$packaging/$script" "$root/DEBIAN/$script"; done
install -m 0644 "$packaging/conffiles" "$root/DEBIAN/conffiles"
(cd "$root" && find . -type f ! -path './DEBIAN/*' ! -path './etc/*' -printf '%P\0' | LC_ALL=C sort -z |
    xargs -0 md5sum) > "$root/DEBIAN/md5sums"
chmod 0644 "$root/DEBIAN/md5sums"
size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
sed -e "s|@VERSION@|$version|" -e "s|@ARCH@|$arch|" -e "s|@DEPENDS@|$depends|" -e "s|@INSTALLED_SIZE@|$size|" \
    "$packaging/control.in" > "$root/DEBIAN/control"
chmod 0644 "$root/DEBIAN/control"

# xz -6 is dpkg's default and what a release ships; `make test` asks for -1: the tests check what the package
# installs, not how small it is, and -6 costs half a minute of CPU on the static binaries.
dpkg-deb --root-owner-group -Zxz "-z$xz_level" --build "$root" "$output"
