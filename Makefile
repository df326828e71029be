# The two commands of the README: `make run` builds and runs the daemon on its built-in defaults,
# `make test` runs every test. Both install what a fresh Debian machine lacks first.
SWIFT ?= swift
ARGS ?=

.PHONY: run test build release deps test-deps lint format bench bench-build bench-peers bench-cluster microbench check-long \
	docs simulate check-gtk gtk-deps

deps:
	./scripts/install-deps.sh run

test-deps:
	./scripts/install-deps.sh test

build: deps
	$(SWIFT) build

# One release configuration for everything a user runs, built once into RELEASE_SCRATCH: `make run`, the package
# and the benchmarks. The Swift runtime is linked statically (Package.swift's staticRuntime), as the package ships it,
# so that `make run` runs what the package installs: no dynamic loader works before the daemon blocks its signals
# (SPEC §7), whose window a signal sent just after exec could otherwise hit. No $$ORIGIN run path (nothing is
# installed beside the binaries),
# relocations resolved at start (BIND_NOW), and no debug information (the package strips it anyway).
RELEASE_SCRATCH ?= .build-release
RELEASE_BIN := $(RELEASE_SCRATCH)/release
RELEASE_FLAGS := --scratch-path $(RELEASE_SCRATCH) -c release --disable-local-rpath -Xlinker -z -Xlinker now \
	-Xswiftc -gnone -Xcc -g0
# Never with the test hooks, whatever the environment holds (SCENESYNC_TEST_BUILD, see TEST_BUILD); with
# SCENESYNC_OWN_RELEASE=1, which only this repository's builds set (see Package.swift).
RELEASE_BUILD := env -u SCENESYNC_TEST_BUILD SCENESYNC_OWN_RELEASE=1 $(SWIFT) build $(RELEASE_FLAGS)
# Where the package is put together (see `deb` below), and what its binaries are built from.
PKG_OUT := $(RELEASE_SCRATCH)/dist
PKG_SOURCES := Package.swift $(shell find Sources -type f)

release: deps
	$(RELEASE_BUILD) --product scenesyncd
	$(RELEASE_BUILD) --product scenesync

run: release
	$(RELEASE_BIN)/scenesyncd $(ARGS)

# Lint first (a format error fails in seconds), then the package (the static release build, man pages, .deb), then
# the test build (TEST_BUILD below), then the tests, with the fuzz smoke beside it all; scripts/test.sh says how long
# each step took. The tests run in parallel: the integration helpers never block the cooperative pool (blocking waits
# run on dedicated threads), so tests that wait on the daemon leave the pool to the others.
test: test-deps
	SWIFT=$(SWIFT) TEST_BUILD="$(TEST_BUILD)" TEST_RUN="$(TEST_RUN)" ./scripts/test.sh

# The tests' build: the release configuration above, in the same build folder, with SCENESYNC_TEST_BUILD=1, which
# gives this package's own modules the test hooks, `-enable-testing` and no optimization (Package.swift). The
# dependencies, C and Swift, are compiled once for both: their compile commands are the same in both builds, since the
# static runtime is a matter of the executables' link only. This package's modules are compiled again, under two
# minutes here, and the executables replace the release ones in RELEASE_BIN, which is why the package takes its
# binaries from a copy (PKG_BIN). Without optimization every `assert` of the code under test is checked.
# `swift build --build-tests` and `swift test`, in the debug configuration, have the same hooks.
TEST_BUILD := env SCENESYNC_TEST_BUILD=1 $(SWIFT) build $(RELEASE_FLAGS) --build-tests
TEST_RUN := env SCENESYNC_TEST_BUILD=1 $(SWIFT) test --scratch-path $(RELEASE_SCRATCH) -c release --skip-build

lint:
	$(SWIFT) format lint --strict -r Sources Tests Fuzz Benchmarks Examples

format:
	$(SWIFT) format -i -r Sources Tests Fuzz Benchmarks Examples

# What is too long for every change (docs/development.md, "Tests"): every harness fuzzed for
# CHECK_LONG_FUZZ_SECONDS, the fault suites with SCENESYNC_FAULT_ROUNDS rounds each, and the bulk merge of
# SCENESYNC_RESCAN_FILES scenes. About half an hour with the defaults; `make test` runs the short version of each.
CHECK_LONG_FUZZ_SECONDS ?= 300
CHECK_LONG_FAULT_ROUNDS ?= 60
CHECK_LONG_RESCAN_FILES ?= 20000

check-long: test-deps deb
	$(SWIFT) build --build-tests
	CI=true SCENESYNC_FAULT_ROUNDS=$(CHECK_LONG_FAULT_ROUNDS) SCENESYNC_RESCAN_FILES=$(CHECK_LONG_RESCAN_FILES) \
		$(SWIFT) test --skip-build --filter 'Fault|RescanTests'
	./Fuzz/fuzz.sh run $(CHECK_LONG_FUZZ_SECONDS)

# The engine's simulation (docs/development.md, "Simulation"): seeded schedules of the real engine and the
# per-connection policy (EngineHarnessTests), open-ended from a random first seed until interrupted, or
# SIMULATE_SEEDS of them. `make test` runs 200.
SIMULATE_SEEDS ?= 0

simulate: test-deps
	$(SWIFT) build --build-tests
	SCENESYNC_HARNESS_SEEDS=$(SIMULATE_SEEDS) $(SWIFT) test --skip-build --filter EngineHarnessTests

# Benchmarks (docs/benchmarks.md), in the release configuration above. `make bench ARGS=fanout` runs one
# scenario; `make bench-peers` runs every scenario beside its peers (Redis, watchman, a raw inotify relay), which
# scripts/install-deps.sh bench installs, and prints the ratios: a few minutes in all.
# The bench runs the scenesyncd beside it; SCENESYNC_BENCH_PREBUILT tells it that this Makefile built that one.
bench-build: deps
	$(RELEASE_BUILD) --product scenesyncd
	$(RELEASE_BUILD) --product scenesync-bench

bench: bench-build
	SCENESYNC_BENCH_PREBUILT=1 $(RELEASE_BIN)/scenesync-bench $(ARGS)

bench-peers: bench-build
	./scripts/install-deps.sh bench
	SCENESYNC_BENCH_PREBUILT=1 $(RELEASE_BIN)/scenesync-bench all --peers $(ARGS)

# Replication across hosts (docs/replication.md): three hosts on one private PostgreSQL, beside PostgreSQL's own
# NOTIFY round trip, in about a minute. `ARGS="--rates 1000 --duration 10"` changes the runs.
bench-cluster: bench-build
	./scripts/install-deps.sh bench
	SCENESYNC_BENCH_PREBUILT=1 $(RELEASE_BIN)/scenesync-bench cluster $(ARGS)

# The GTK 4 example app (Examples/GtkRecipes, a package of its own that depends on this one by path), for real:
# scripts/check-gtk.sh runs two copies of it on a private daemon (the package's release binaries, PKG_BIN below: after
# `make test` they are up to date, while the test build has replaced those in RELEASE_BIN, which `release` would
# compile again) and a private X server (Xvfb), types into their windows with xdotool, reads their titles, checks the
# restore after a clean close and after a kill, and saves the screenshot docs/images/gtk-recipes.png. Not part of
# `make test`: CI runs it after.
GTK_SCRATCH ?= Examples/GtkRecipes/.build

gtk-deps:
	./scripts/install-deps.sh gtk

check-gtk: gtk-deps $(PKG_OUT)/binaries.stamp
	$(SWIFT) build --package-path Examples/GtkRecipes --scratch-path $(GTK_SCRATCH) --product GtkRecipes
	SCENESYNC_BIN=$(PKG_BIN) GTK_RECIPES=$$($(SWIFT) build --package-path Examples/GtkRecipes \
		--scratch-path $(GTK_SCRATCH) --show-bin-path)/GtkRecipes ./scripts/check-gtk.sh

# The core microbenchmarks on ordo-one/benchmark (instructions and allocations per operation). Package.swift adds
# them only with SCENESYNC_MICROBENCH=1, so `make test` never builds them; their own build folder keeps the main
# one untouched.
microbench: deps
	SCENESYNC_MICROBENCH=1 $(SWIFT) package --scratch-path .build-microbench benchmark --target CoreMicrobenchmarks --no-progress \
		$(ARGS)

# The DocC catalog of SceneSyncClient (Sources/SceneSyncClient/SceneSyncClient.docc; docs/development.md,
# "Documentation") through swift-docc-plugin, in a build folder of its own so that .build is left alone. Any warning
# fails it, an unresolved symbol link among them. The archive is DOCS_ARCHIVE.
DOCS_SCRATCH ?= .build-docs
DOCS_ARCHIVE ?= $(DOCS_SCRATCH)/SceneSyncClient.doccarchive

docs: deps
	$(SWIFT) package --scratch-path $(DOCS_SCRATCH) --allow-writing-to-directory $(DOCS_SCRATCH) \
		generate-documentation --target SceneSyncClient --warnings-as-errors --output-path $(DOCS_ARCHIVE)

# libFuzzer harnesses under Fuzz/ (docs/development.md, "Fuzzing"), built with swiftc and the toolchain's sanitizers.
.PHONY: fuzz fuzz-smoke
# `make fuzz`: seconds per harness (0: until interrupted) and which harnesses (json, codec, command; default all).
FUZZ_SECONDS ?= 600
FUZZ_HARNESSES ?=

# Each harness in turn for FUZZ_SECONDS, growing .build-fuzz/corpus/ beside the committed seeds.
fuzz:
	./Fuzz/fuzz.sh run $(FUZZ_SECONDS) $(FUZZ_HARNESSES)

# FUZZ_SMOKE_SECONDS per harness on a temp copy of the seeds; `make test` runs it beside the tests.
FUZZ_SMOKE_SECONDS ?= 10

fuzz-smoke:
	./Fuzz/fuzz.sh smoke $(FUZZ_SMOKE_SECONDS)

# Packaging: `make install` (PREFIX, DESTDIR and the directories below may be overridden), `make deb`, `make man`.
# Both install the same files, built once into RELEASE_SCRATCH: scenesyncd and scenesync in the release configuration
# above, their man pages (generated from the argument parsers by swift-argument-parser's
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
MAN_DATE ?= $(shell git log -1 --format=%cs 2>/dev/null || date -u +%F)
DEB_VERSION := $(shell sed -n '1s/^scenesync (\(.*\)).*/\1/p' packaging/deb/changelog)
DEB_ARCH := $(shell dpkg --print-architecture 2>/dev/null)
DEB := scenesync_$(DEB_VERSION)_$(DEB_ARCH).deb

.PHONY: install man deb

# What packaging needs (scripts/install-deps.sh pkg), checked once per build tree.
$(PKG_OUT)/deps.stamp:
	./scripts/install-deps.sh pkg
	mkdir -p $(PKG_OUT) && touch $@

# The binaries are copied out of the build folder, into PKG_BIN: the test build (TEST_BUILD) builds the same products
# into it again, with the test hooks, and the package must not pick those up.
PKG_BIN := $(PKG_OUT)/bin
$(PKG_OUT)/binaries.stamp: $(PKG_SOURCES) Makefile | $(PKG_OUT)/deps.stamp
	$(RELEASE_BUILD) --product scenesyncd
	$(RELEASE_BUILD) --product scenesync
	$(RELEASE_BUILD) --product generate-manual
	mkdir -p $(PKG_BIN)
	cp $(RELEASE_BIN)/scenesyncd $(RELEASE_BIN)/scenesync $(RELEASE_BIN)/generate-manual $(PKG_BIN)/
	touch $@

# scenesyncd(8) is a daemon's page, scenesync(1) a user command's, generated from the release binaries' argument
# parsers (see scripts/generate-man.sh).
$(PKG_OUT)/man/scenesyncd.8 $(PKG_OUT)/man/scenesync.1 &: $(PKG_OUT)/binaries.stamp scripts/generate-man.sh
	./scripts/generate-man.sh $(PKG_OUT)/man $(MAN_DATE) $(PKG_BIN)

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

# The xz level of the package: dpkg's default, 6; `make test` exports DEB_XZ_LEVEL=1, so that the packaging tests'
# `make -q` sees the same level. The stamp holds the last level used (rewritten only when it changes), so that
# another level builds the package again.
DEB_XZ_LEVEL ?= 6
DEB_XZ_STAMP := $(PKG_OUT)/xz-level
$(shell mkdir -p $(PKG_OUT) && echo $(DEB_XZ_LEVEL) | cmp -s - $(DEB_XZ_STAMP) || echo $(DEB_XZ_LEVEL) > $(DEB_XZ_STAMP))

$(DEB): $(PKG_FILES) README.md config/scenesyncd.yaml $(wildcard systemd/*.s* systemd/user/*) $(wildcard packaging/deb/*) \
		scripts/build-deb.sh $(DEB_XZ_STAMP)
	rm -rf $(PKG_OUT)/deb-root
	$(MAKE) --no-print-directory install DESTDIR=$(PKG_OUT)/deb-root PREFIX=/usr SYSCONFDIR=/etc \
		SYSTEMDSYSTEMUNITDIR=/lib/systemd/system SYSTEMDUSERUNITDIR=/usr/lib/systemd/user \
		ZSHCOMPLETIONDIR=/usr/share/zsh/vendor-completions
	./scripts/build-deb.sh $(PKG_OUT)/deb-root $(DEB_VERSION) $(DEB_ARCH) $@ $(DEB_XZ_LEVEL)
