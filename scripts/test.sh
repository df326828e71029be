#!/usr/bin/env bash
# `make test`: every test, the quickest failures first, with the time each step took.
#
#   1. lint, which fails in seconds;
#   2. the package (the static release build, the man pages from its binaries, and the .deb);
#   3. the test build (TEST_BUILD, see the Makefile): the same release configuration in the same build folder, so
#      that the dependencies, C and Swift, are compiled once; only this package's own modules are compiled again,
#      with the test hooks. A debug build of the tests beside the release build of the package compiled everything
#      twice: 338 s and 348 s of a 762 s run from a clean clone here;
#   4. the tests.
#
# The fuzz smoke (each libFuzzer harness for FUZZ_SMOKE_SECONDS) runs beside the builds and the tests under
# SCHED_IDLE: it takes the cycles they leave idle instead of a step of its own. Not `nice`: the swift driver starts its
# compiler jobs at priority 0 again, so a niced harness build took its share of both cores from the builds, while the
# scheduling class is inherited by every child. A machine that is never idle (other work beside the suite) would starve
# it for good, so once the tests are done, whatever is left of it runs in the normal class. The test runner's summary
# line comes last, so that a reader of the log (and CI) finds it at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
swift=${SWIFT:-swift}
# The Makefile passes both (run `make test`, not this script).
test_build=${TEST_BUILD:?run through make test}
test_run=${TEST_RUN:?run through make test}
step() { printf '\n== %s (at %d s)\n' "$1" "$SECONDS"; }

# The package is compressed with xz -1, not -6: the tests check what it installs, not its size, and -6 costs half a
# minute of CPU on the static binaries. Exported, so that the packaging tests' `make -q` agrees.
export DEB_XZ_LEVEL=${DEB_XZ_LEVEL:-1}

step "lint"
"$swift" format lint --strict -r Sources Tests Fuzz Benchmarks Examples

# The fuzz smoke in a process group of its own (setsid), so that all of it can be promoted, and ended: a step that
# fails ends the script, and the fuzz smoke with it.
mkdir -p .build-fuzz
setsid --wait chrt --idle 0 ./Fuzz/fuzz.sh smoke "${FUZZ_SMOKE_SECONDS:-10}" > .build-fuzz/smoke.log 2>&1 &
fuzz=$!
trap 'kill -- -"$fuzz" 2>/dev/null || true' EXIT

step "build the package"
make --no-print-directory deb SWIFT="$swift"

step "build the tests"
$test_build

step "tests"
tests_status=0
log=.build-release/test-output.log
$test_run 2>&1 | tee "$log" || tests_status=$?

step "fuzz smoke"
# Every process of the group in the normal class, again each second for the ones it starts meanwhile.
while kill -0 "$fuzz" 2>/dev/null; do
    for pid in $(pgrep -g "$fuzz"); do chrt --other -p 0 "$pid" 2>/dev/null || true; done
    sleep 1
done
fuzz_status=0
wait "$fuzz" || fuzz_status=$?
cat .build-fuzz/smoke.log
[[ $fuzz_status == 0 ]] || echo "fuzz smoke: FAILED (exit $fuzz_status)" >&2

step "done"
grep -E '^(✔|✘) Test run with ' "$log" | tail -n 1 || echo "the test run printed no summary" >&2
[[ $tests_status == 0 && $fuzz_status == 0 ]]
