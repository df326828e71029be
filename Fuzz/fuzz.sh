#!/usr/bin/env bash
# Builds and runs the libFuzzer harnesses under Fuzz/ (docs/development.md, "Fuzzing").
#
#   Fuzz/fuzz.sh build                     build every harness into .build-fuzz/
#   Fuzz/fuzz.sh smoke [SECONDS]           each harness for SECONDS (default 20) on a temp copy of its seed corpus
#   Fuzz/fuzz.sh run [SECONDS] [NAME...]   each harness (or the named ones) in turn for SECONDS (default 600; 0 runs
#                                          until interrupted), growing .build-fuzz/corpus/NAME beside the seeds
#
# The harnesses are built with swiftc directly, not SwiftPM: they need the fuzzer and address sanitizers, and only
# compile the core's sources (plus the daemon's request decoder), which takes well under a minute. Asserts stay on
# (-assert-config Debug) because the codec asserts its own round-trip invariant. A crash, a broken property, a
# leak or a timeout stops the run with a non-zero status and leaves the input in .build-fuzz/artifacts/NAME/.
set -euo pipefail
cd "$(dirname "$0")/.."

SWIFTC=${SWIFTC:-swiftc}
OUT=${FUZZ_BUILD_DIR:-.build-fuzz}
HARNESSES=(json codec command)

# Also used for the core library, so that coverage and ASan reach the code under test, not just the harness.
FLAGS=(-sanitize=fuzzer,address -O -assert-config Debug -gline-tables-only -swift-version 6
    -enable-upcoming-feature ExistentialAny -enable-upcoming-feature InternalImportsByDefault)

# The sources of each harness besides Fuzz/Support.
sources() {
    case "$1" in
    json) echo Fuzz/JSONParser/*.swift ;;
    codec) echo Fuzz/SceneFileCodec/*.swift ;;
    # The request decoder (its general and its one-pass path) and the one daemon type it uses, compiled beside the
    # harness: the daemon target itself needs swift-nio and more, and none of these files imports anything but
    # SceneSyncCore.
    command) echo Fuzz/Command/*.swift Sources/SceneSyncDaemon/Server/Command.swift \
        Sources/SceneSyncDaemon/Server/Command+Change.swift Sources/SceneSyncDaemon/Server/ResponseWriter.swift ;;
    *) echo "unknown harness: $1 (one of: ${HARNESSES[*]})" >&2; return 1 ;;
    esac
}

corpus() { echo "Fuzz/Corpus/$1"; }

# Whether $1 is missing or older than any of the other arguments.
stale() {
    local target=$1
    shift
    [[ -e $target ]] || return 0
    [[ -n $(find "$@" -newer "$target" -print -quit) ]]
}

build_core() {
    local lib=$OUT/core/libSceneSyncCore.a
    if stale "$lib" Sources/SceneSyncCore Fuzz/fuzz.sh; then
        echo "building SceneSyncCore (fuzzer, address sanitizer)"
        mkdir -p "$OUT/core"
        # -enable-testing: the harnesses use @testable import to check internal invariants (item literals, spans).
        "$SWIFTC" "${FLAGS[@]}" -parse-as-library -enable-testing -wmo -module-name SceneSyncCore \
            -emit-library -static -emit-module -emit-module-path "$OUT/core/SceneSyncCore.swiftmodule" \
            Sources/SceneSyncCore/*.swift -o "$lib"
    fi
}

build_harness() {
    local name=$1 files
    files=$(sources "$name")
    # shellcheck disable=SC2086  # the file lists are globs expanded on purpose
    if stale "$OUT/$name-fuzz" $files Fuzz/Support "$OUT/core/libSceneSyncCore.a"; then
        echo "building $OUT/$name-fuzz"
        # shellcheck disable=SC2086
        "$SWIFTC" "${FLAGS[@]}" -parse-as-library -use-ld=lld -module-name "Fuzz_$name" \
            -I "$OUT/core" -L "$OUT/core" -lSceneSyncCore Fuzz/Support/*.swift $files -o "$OUT/$name-fuzz"
    fi
}

build() {
    build_core
    for name in "${HARNESSES[@]}"; do build_harness "$name"; done
}

# Runs one harness: $1 name, $2 seconds (0: no limit), $3 "live" to show libFuzzer's output as it comes (else it
# only goes to the log), then corpus directories; libFuzzer adds new inputs to the first one only.
run_one() {
    local name=$1 seconds=$2 live=$3 log status
    shift 3
    mkdir -p "$OUT/artifacts/$name" "$OUT/logs"
    log=$OUT/logs/$name.log
    local options=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=8192 -print_final_stats=1
        -artifact_prefix="$OUT/artifacts/$name/" -dict="Fuzz/$name.dict")
    echo "fuzzing $name for ${seconds}s (log: $log)"
    # Swift's own crash backtracer would otherwise handle the trap first and slow the report down.
    if [[ $live == live ]]; then
        SWIFT_BACKTRACE=enable=no "$OUT/$name-fuzz" "${options[@]}" "$@" 2>&1 | tee "$log" && status=0 || status=1
    else
        SWIFT_BACKTRACE=enable=no "$OUT/$name-fuzz" "${options[@]}" "$@" >"$log" 2>&1 && status=0 || status=1
    fi
    if [[ $status != 0 ]]; then
        [[ $live == live ]] || tail -n 60 "$log" >&2
        echo "fuzz $name: FAILED; the input is in $OUT/artifacts/$name/" >&2
        return 1
    fi
    summary "$name" "$log"
}

summary() {
    local runs seconds
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$2")
    seconds=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$2")
    echo "fuzz $1: ok, $runs executions in ${seconds}s ($(( runs / (seconds > 0 ? seconds : 1) )) exec/s)," \
        "corpus $(sed -n 's/.*DONE .* cov: \([0-9]*\) ft: \([0-9]*\) corp: \([0-9]*\).*/cov \1, ft \2, \3 inputs/p' "$2")"
}

command=${1:-}
shift || true
case "$command" in
build)
    build
    ;;
smoke)
    seconds=${1:-20}
    build
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    status=0
    for name in "${HARNESSES[@]}"; do
        # A temp copy: what the run adds must not change the committed seeds.
        cp -r "$(corpus "$name")" "$tmp/$name"
        run_one "$name" "$seconds" quiet "$tmp/$name" || status=1
    done
    exit $status
    ;;
run)
    seconds=${1:-600}
    shift || true
    names=("$@")
    [[ ${#names[@]} -gt 0 ]] || names=("${HARNESSES[@]}")
    build
    for name in "${names[@]}"; do
        sources "$name" >/dev/null
        mkdir -p "$OUT/corpus/$name"
        run_one "$name" "$seconds" live "$OUT/corpus/$name" "$(corpus "$name")"
    done
    ;;
*)
    echo "usage: $0 build | smoke [SECONDS] | run [SECONDS] [json|codec|command ...]" >&2
    exit 2
    ;;
esac
