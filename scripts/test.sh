#!/usr/bin/env bash
# `make test`: every test, the quickest failures first, with the time each step took.
#
#   1. lint, which fails in seconds;
#   2. the package (`make deb`: the static release build, man pages, the .deb the packaging tests install);
#   3. the debug build of the tests;
#   4. the tests, with the fuzz smoke (each libFuzzer harness for FUZZ_SMOKE_SECONDS) beside them: the suite must
#      pass with other work on the machine anyway, and the two steps together take as long as the longer one.
#
# The test runner's own summary line comes last, so that a reader of the log (and CI) finds it at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
swift=${SWIFT:-swift}
step() { printf '\n== %s (at %d s)\n' "$1" "$SECONDS"; }

step "lint"
"$swift" format lint --strict -r Sources Tests Fuzz Benchmarks

step "package: make deb"
make --no-print-directory deb SWIFT="$swift"

step "build the tests"
"$swift" build --build-tests

step "tests, with the fuzz smoke beside them"
mkdir -p .build-fuzz
./Fuzz/fuzz.sh smoke "${FUZZ_SMOKE_SECONDS:-15}" > .build-fuzz/smoke.log 2>&1 &
fuzz=$!
tests_status=0
"$swift" test --skip-build 2>&1 | tee .build/test-output.log || tests_status=$?
fuzz_status=0
wait "$fuzz" || fuzz_status=$?

step "fuzz smoke"
cat .build-fuzz/smoke.log
[[ $fuzz_status == 0 ]] || echo "fuzz smoke: FAILED (exit $fuzz_status)" >&2

step "done"
grep -E '^(✔|✘) Test run with ' .build/test-output.log | tail -n 1 || echo "the test run printed no summary" >&2
[[ $tests_status == 0 && $fuzz_status == 0 ]]
