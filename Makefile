# The two commands of the README: `make run` builds and runs the daemon on its built-in defaults,
# `make test` runs every test. Both install what a fresh Debian machine lacks first.
SWIFT ?= swift
ARGS ?=

.PHONY: run test build release deps test-deps lint format bench

deps:
	./scripts/install-deps.sh run

test-deps:
	./scripts/install-deps.sh test

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build -c release

run: release
	$(SWIFT) run -c release scenesyncd $(ARGS)

test: test-deps
	$(SWIFT) build --build-tests
	# In parallel: the integration helpers never block the cooperative pool (blocking waits run on dedicated
	# threads), so tests that wait on the daemon leave the pool to the others.
	$(SWIFT) test --skip-build
	$(MAKE) fuzz-smoke
	$(SWIFT) format lint --strict -r Sources Tests Fuzz

lint:
	$(SWIFT) format lint --strict -r Sources Tests Fuzz

format:
	$(SWIFT) format -i -r Sources Tests Fuzz

bench: deps
	$(SWIFT) run -c release scenesync-bench $(ARGS)

# libFuzzer harnesses under Fuzz/ (README, "Fuzzing"), built with swiftc and the toolchain's sanitizers.
.PHONY: fuzz fuzz-smoke
# `make fuzz`: seconds per harness (0: until interrupted) and which harnesses (json, codec, command; default all).
FUZZ_SECONDS ?= 600
FUZZ_HARNESSES ?=

# Each harness in turn for FUZZ_SECONDS, growing .build-fuzz/corpus/ beside the committed seeds.
fuzz:
	./Fuzz/fuzz.sh run $(FUZZ_SECONDS) $(FUZZ_HARNESSES)

# About a minute in all: 20 s per harness on a temp copy of the seeds; part of `make test`.
fuzz-smoke:
	./Fuzz/fuzz.sh smoke 20
