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
	$(SWIFT) format lint --strict -r Sources Tests

lint:
	$(SWIFT) format lint --strict -r Sources Tests

format:
	$(SWIFT) format -i -r Sources Tests

bench: deps
	$(SWIFT) run -c release scenesync-bench $(ARGS)
