# The two commands of the README: `make run` builds and runs the daemon on its built-in defaults,
# `make test` runs every test. Both install what a fresh Debian machine lacks first.
SWIFT ?= swift
ARGS ?=

.PHONY: run test build release deps test-deps lint format bench bench-peers bench-cluster microbench

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

test: test-deps deb
	$(SWIFT) build --build-tests
	# In parallel: the integration helpers never block the cooperative pool (blocking waits run on dedicated
	# threads), so tests that wait on the daemon leave the pool to the others.
	$(SWIFT) test --skip-build
	$(MAKE) fuzz-smoke
	$(SWIFT) format lint --strict -r Sources Tests Fuzz Benchmarks

lint:
	$(SWIFT) format lint --strict -r Sources Tests Fuzz Benchmarks

format:
	$(SWIFT) format -i -r Sources Tests Fuzz Benchmarks

# Benchmarks (README, "Benchmarks"), in release mode in their own build folder. `make bench ARGS=fanout` runs one
# scenario; `make bench-peers` runs every scenario beside its peers (Redis, watchman, a raw inotify relay), which
# scripts/install-deps.sh bench installs, and prints the ratios: a few minutes in all.
BENCH_SCRATCH ?= .build-release

bench: deps
	$(SWIFT) run -c release --scratch-path $(BENCH_SCRATCH) scenesync-bench $(ARGS)

bench-peers: deps
	./scripts/install-deps.sh bench
	$(SWIFT) run -c release --scratch-path $(BENCH_SCRATCH) scenesync-bench all --peers $(ARGS)

# Replication across hosts (issue #11): three hosts on one private PostgreSQL, beside PostgreSQL's own NOTIFY round
# trip, in about a minute. `ARGS="--rates 1000 --duration 10"` changes the runs.
bench-cluster: deps
	./scripts/install-deps.sh bench
	$(SWIFT) run -c release --scratch-path $(BENCH_SCRATCH) scenesync-bench cluster $(ARGS)

# The core microbenchmarks on ordo-one/benchmark (instructions and allocations per operation). Package.swift adds
# them only with SCENESYNC_MICROBENCH=1, so `make test` never builds them; their own build folder keeps the main
# one untouched.
microbench: deps
	SCENESYNC_MICROBENCH=1 $(SWIFT) package --scratch-path .build-microbench benchmark --target CoreMicrobenchmarks --no-progress \
		$(ARGS)

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

# Packaging: `make install` (PREFIX, DESTDIR and the directories below may be overridden), `make deb`, `make man`.
# Both install the same files, built once into PKG_SCRATCH: scenesyncd and scenesync in release mode with the Swift
# runtime linked statically, their man pages (generated from the argument parsers by swift-argument-parser's
# generate-manual plugin) and the CLI's shell completions. Each step reruns only when its inputs changed.
PREFIX ?= /usr/local
DESTDIR ?=
BINDIR ?= $(PREFIX)/bin
SBINDIR ?= $(PREFIX)/sbin
DATADIR ?= $(PREFIX)/share
MANDIR ?= $(DATADIR)/man
DOCDIR ?= $(DATADIR)/doc/scenesync
SYSCONFDIR ?= /etc
SYSTEMDSYSTEMUNITDIR ?= $(PREFIX)/lib/systemd/system
SYSTEMDUSERUNITDIR ?= $(PREFIX)/lib/systemd/user
BASHCOMPLETIONDIR ?= $(DATADIR)/bash-completion/completions
ZSHCOMPLETIONDIR ?= $(DATADIR)/zsh/site-functions
FISHCOMPLETIONDIR ?= $(DATADIR)/fish/vendor_completions.d
PKG_SCRATCH ?= .build-deb
PKG_OUT := $(PKG_SCRATCH)/dist
PKG_BIN := $(PKG_SCRATCH)/release
PKG_SOURCES := Package.swift $(shell find Sources -type f)
MAN_DATE ?= $(shell git log -1 --format=%cs 2>/dev/null || date -u +%F)
DEB_VERSION := $(shell sed -n '1s/^scenesync (\(.*\)).*/\1/p' packaging/deb/changelog)
DEB_ARCH := $(shell dpkg --print-architecture 2>/dev/null)
DEB := scenesync_$(DEB_VERSION)_$(DEB_ARCH).deb

.PHONY: install man deb

# What packaging needs (scripts/install-deps.sh pkg), checked once per build tree.
$(PKG_OUT)/deps.stamp:
	./scripts/install-deps.sh pkg
	mkdir -p $(PKG_OUT) && touch $@

# No $$ORIGIN run path (nothing is installed beside the binaries), and relocations resolved at start (BIND_NOW).
PKG_BUILD := $(SWIFT) build --scratch-path $(PKG_SCRATCH) -c release --static-swift-stdlib --disable-local-rpath \
	-Xlinker -z -Xlinker now

$(PKG_OUT)/binaries.stamp: $(PKG_SOURCES) Makefile | $(PKG_OUT)/deps.stamp
	$(PKG_BUILD) --product scenesyncd
	$(PKG_BUILD) --product scenesync
	mkdir -p $(PKG_OUT) && touch $@

# scenesyncd(8) is a daemon's page, scenesync(1) a user command's. The generate-manual plugin builds in .build, in
# debug mode (see scripts/generate-man.sh).
$(PKG_OUT)/man/scenesyncd.8 $(PKG_OUT)/man/scenesync.1 &: $(PKG_SOURCES) scripts/generate-man.sh | $(PKG_OUT)/deps.stamp
	SWIFT=$(SWIFT) ./scripts/generate-man.sh $(PKG_OUT)/man $(MAN_DATE)

$(PKG_OUT)/completions/scenesync.bash $(PKG_OUT)/completions/_scenesync $(PKG_OUT)/completions/scenesync.fish &: \
		$(PKG_OUT)/binaries.stamp
	mkdir -p $(PKG_OUT)/completions
	$(PKG_BIN)/scenesync --generate-completion-script bash | sed '1{/^#!/d}' > $(PKG_OUT)/completions/scenesync.bash
	$(PKG_BIN)/scenesync --generate-completion-script zsh > $(PKG_OUT)/completions/_scenesync
	$(PKG_BIN)/scenesync --generate-completion-script fish > $(PKG_OUT)/completions/scenesync.fish

man: $(PKG_OUT)/man/scenesyncd.8 $(PKG_OUT)/man/scenesync.1

PKG_FILES := $(PKG_OUT)/binaries.stamp $(PKG_OUT)/man/scenesyncd.8 $(PKG_OUT)/man/scenesync.1 \
	$(PKG_OUT)/completions/scenesync.bash $(PKG_OUT)/completions/_scenesync $(PKG_OUT)/completions/scenesync.fish

# The units name /usr/local/sbin/scenesyncd and /usr/local/bin/scenesync in ExecStart=/ExecReload=; installed, they
# name SBINDIR and BINDIR. An existing configuration file is never overwritten.
install-unit = sed -e 's|/usr/local/sbin/scenesyncd|$(SBINDIR)/scenesyncd|' -e 's|/usr/local/bin/scenesync |$(BINDIR)/scenesync |' \
	$(1) > $(2) && chmod 0644 $(2)

install: $(PKG_FILES)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(SBINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man8 \
		$(DESTDIR)$(DOCDIR) $(DESTDIR)$(SYSCONFDIR)/scenesync $(DESTDIR)$(SYSTEMDSYSTEMUNITDIR) \
		$(DESTDIR)$(SYSTEMDUSERUNITDIR) $(DESTDIR)$(BASHCOMPLETIONDIR) $(DESTDIR)$(ZSHCOMPLETIONDIR) \
		$(DESTDIR)$(FISHCOMPLETIONDIR)
	install -m 0755 $(PKG_BIN)/scenesyncd $(DESTDIR)$(SBINDIR)/scenesyncd
	install -m 0755 $(PKG_BIN)/scenesync $(DESTDIR)$(BINDIR)/scenesync
	install -m 0644 $(PKG_OUT)/man/scenesyncd.8 $(DESTDIR)$(MANDIR)/man8/scenesyncd.8
	install -m 0644 $(PKG_OUT)/man/scenesync.1 $(DESTDIR)$(MANDIR)/man1/scenesync.1
	install -m 0644 $(PKG_OUT)/completions/scenesync.bash $(DESTDIR)$(BASHCOMPLETIONDIR)/scenesync
	install -m 0644 $(PKG_OUT)/completions/_scenesync $(DESTDIR)$(ZSHCOMPLETIONDIR)/_scenesync
	install -m 0644 $(PKG_OUT)/completions/scenesync.fish $(DESTDIR)$(FISHCOMPLETIONDIR)/scenesync.fish
	install -m 0644 README.md $(DESTDIR)$(DOCDIR)/README.md
	test -e $(DESTDIR)$(SYSCONFDIR)/scenesync/scenesyncd.yaml || \
		install -m 0644 config/scenesyncd.yaml $(DESTDIR)$(SYSCONFDIR)/scenesync/scenesyncd.yaml
	$(call install-unit,systemd/scenesyncd.service,$(DESTDIR)$(SYSTEMDSYSTEMUNITDIR)/scenesyncd.service)
	$(call install-unit,systemd/scenesyncd.socket,$(DESTDIR)$(SYSTEMDSYSTEMUNITDIR)/scenesyncd.socket)
	$(call install-unit,systemd/scenesync-metrics.service,$(DESTDIR)$(SYSTEMDSYSTEMUNITDIR)/scenesync-metrics.service)
	$(call install-unit,systemd/scenesync-metrics.timer,$(DESTDIR)$(SYSTEMDSYSTEMUNITDIR)/scenesync-metrics.timer)
	$(call install-unit,systemd/user/scenesyncd.service,$(DESTDIR)$(SYSTEMDUSERUNITDIR)/scenesyncd.service)
	$(call install-unit,systemd/user/scenesyncd.socket,$(DESTDIR)$(SYSTEMDUSERUNITDIR)/scenesyncd.socket)

# The package installs into Debian's places; scripts/build-deb.sh adds what a .deb needs besides (stripped binaries,
# compressed man pages, copyright, changelog, control with the computed Depends:, maintainer scripts).
deb: $(DEB)

$(DEB): $(PKG_FILES) README.md config/scenesyncd.yaml $(wildcard systemd/*.s* systemd/user/*) $(wildcard packaging/deb/*) \
		scripts/build-deb.sh
	rm -rf $(PKG_OUT)/deb-root
	$(MAKE) --no-print-directory install DESTDIR=$(PKG_OUT)/deb-root PREFIX=/usr SYSCONFDIR=/etc \
		SYSTEMDSYSTEMUNITDIR=/lib/systemd/system SYSTEMDUSERUNITDIR=/usr/lib/systemd/user \
		ZSHCOMPLETIONDIR=/usr/share/zsh/vendor-completions
	./scripts/build-deb.sh $(PKG_OUT)/deb-root $(DEB_VERSION) $(DEB_ARCH) $@
