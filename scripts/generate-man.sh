#!/usr/bin/env bash
# Writes scenesyncd.8 and scenesync.1 into OUTDIR with swift-argument-parser's generate-manual plugin, which turns
# each executable's argument parser (its --experimental-dump-help) into an mdoc page (`make man` calls this):
#   scripts/generate-man.sh OUTDIR DATE
# The plugin builds every product itself, in the configuration it is given, and gives every page the one section
# it is given. So it runs twice (section 8 for the daemon, 1 for the CLI; the second build has nothing to do), on
# the debug build in .build that `make test` uses too: run on .build-release it would replace the statically linked
# release binaries with dynamically linked ones. The pages do not depend on the build configuration.
set -euo pipefail
out=$1 date=$2
swift=${SWIFT:-swift}
outputs=.build/plugins/GenerateManual/outputs
mkdir -p "$out"
for page in scenesyncd.8 scenesync.1; do
    name=${page%.*} section=${page##*.}
    rm -rf "$outputs"
    "$swift" package plugin generate-manual --configuration debug --section "$section" --date "$date"
    # mdoc allows no empty lines; the generator writes one between the paragraphs of a discussion.
    sed 's/^$/.Pp/' "$outputs/$name/$page" > "$out/$page.tmp"
    mv "$out/$page.tmp" "$out/$page"
done
