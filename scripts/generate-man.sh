#!/usr/bin/env bash
# Writes scenesyncd.8 and scenesync.1 into OUTDIR with swift-argument-parser's generate-manual tool, which turns
# each executable's argument parser (its --experimental-dump-help) into an mdoc page (`make man` calls this):
#   scripts/generate-man.sh OUTDIR DATE BINDIR
# BINDIR holds the release binaries and the tool, built by the same release build, whose swift-argument-parser
# objects were already there. Its plugin (`swift package plugin generate-manual`) would build every product again
# in a configuration of its own, minutes of work for pages that do not depend on it, and gives every page one
# section where the daemon's page is section 8 and the CLI's section 1.
set -euo pipefail
out=$1 date=$2 bindir=$3
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for page in scenesyncd.8 scenesync.1; do
    name=${page%.*} section=${page##*.}
    "$bindir/generate-manual" "$bindir/$name" --output-directory "$tmp" --section "$section" --date "$date"
    # mdoc allows no empty lines; the generator writes one between the paragraphs of a discussion.
    sed 's/^$/.Pp/' "$tmp/$page" > "$out/$page.tmp"
    mv "$out/$page.tmp" "$out/$page"
done
