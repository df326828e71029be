// swift-tools-version: 6.2
import PackageDescription

// The core microbenchmarks (Benchmarks/, ordo-one/benchmark) are part of the package only when asked for, by
// `make microbench`: without the variable neither `swift build` nor `make test` resolves or builds the benchmark
// package and its malloc interposer.
let microbenchmarks = Context.environment["SCENESYNC_MICROBENCH"] == "1"

// The build that `make test` runs the tests on (the Makefile's TEST_BUILD): the release configuration in the
// package's build folder, so that the dependencies, C and Swift, are compiled once for both the package and the tests.
// Only this package's own modules are compiled again, with the test hooks, `-enable-testing` for `@testable import`
// and no optimization (which the tests do not need, and which would double their build).
let testBuild = Context.environment["SCENESYNC_TEST_BUILD"] == "1"

let upcomingFeatures: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

// The test hooks (`SCENESYNC_TEST_HOOKS=1`, docs/development.md) exist in debug builds and in the test build only:
// the package and `make run` have none.
let strict: [SwiftSetting] =
    upcomingFeatures
    + (testBuild
        ? [.define("SCENESYNC_TEST_HOOKS"), .unsafeFlags(["-enable-testing"])]
        : [.define("SCENESYNC_TEST_HOOKS", .when(configuration: .debug))])
    + (testBuild ? [.unsafeFlags(["-Onone"])] : [])

// The daemon's module leaves out the runtime's exclusivity checks in the release build: each access to a class's stored
// property on the engine loop was checked, 4 % of the daemon's CPU when a change goes to a hundred subscribers. The
// tests' build keeps them (it is not a release build), so every test still checks every access. Only there: an app
// that depends on this package for `SceneSyncClient` builds `SceneSyncCore` too, and SwiftPM refuses unsafe flags in
// the targets of a dependency.
let engineSettings: [SwiftSetting] =
    strict + (testBuild ? [] : [.unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))])

// `SceneSyncCore` leaves them out as well, but only in this repository's own release builds (the Makefile's
// RELEASE_BUILD sets SCENESYNC_OWN_RELEASE=1): the parse, plan and commit of every change run in it, and its checks were
// 3 % of what a paced client change cost the daemon. An app's build of this package has no such variable, so it sees
// no unsafe flag.
let ownRelease = Context.environment["SCENESYNC_OWN_RELEASE"] == "1" && !testBuild
let coreSettings: [SwiftSetting] =
    strict + (ownRelease ? [.unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))] : [])

let testSettings: [SwiftSetting] = upcomingFeatures + (testBuild ? [.unsafeFlags(["-Onone"])] : [])

// The shipped executables carry the Swift runtime and Foundation in their release builds, so that the package needs
// no toolchain and no dynamic loader runs Swift code before the daemon blocks its signals (SPEC §7; see the Makefile).
// Here, not `--static-swift-stdlib`: that flag also compiles every module against the static runtime's modules, which
// lack Swift Testing, so the tests' build compiled every dependency a second time. Only the link differs: the static
// libraries that Foundation's static archives need (the dynamic modules' autolink entries do not name them), and lld,
// which resolves them in any order. lld's `--no-rosegment` keeps read-only data in the code's segment, as gold does: in
// a segment of its own, an idle daemon held 6 MB more of the executable's pages (24 MB of RSS instead of 17.5).
let staticRuntime: [LinkerSetting] = [
    .unsafeFlags(
        [
            "-static-stdlib", "-use-ld=lld", "-Xlinker", "--no-rosegment", "-lCoreFoundation", "-l_FoundationICU",
            "-l_FoundationCShims", "-l_FoundationCollections", "-lswiftSynchronization",
        ], .when(configuration: .release))
]

let package = Package(
    name: "scenesync",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "SceneSyncCore", targets: ["SceneSyncCore"]),
        .library(name: "SceneSyncClient", targets: ["SceneSyncClient"]),
        .library(name: "SceneSyncDaemon", targets: ["SceneSyncDaemon"]),
        .executable(name: "scenesyncd", targets: ["scenesyncd"]),
        .executable(name: "scenesync", targets: ["scenesync"]),
        .executable(name: "scenesync-bench", targets: ["scenesync-bench"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(
            url: "https://github.com/apple/swift-configuration.git",
            from: "1.4.0",
            traits: [.defaults, "YAML"]
        ),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        // Already in the graph through swift-configuration's YAML trait; used directly for strict key checking.
        .package(url: "https://github.com/jpsim/Yams", from: "6.0.0"),
        // The benchmark's latency histograms.
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift.git", from: "0.2.0"),
        // Only the replication target links it, so the daemon's core builds and tests without it.
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        // `make docs`: the DocC catalog of SceneSyncClient. A command plugin only; nothing links it.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CSystemd",
            pkgConfig: "libsystemd",
            providers: [.apt(["libsystemd-dev"])]
        ),
        // Blocks the daemon's signals in an ELF constructor, before any thread exists (see daemon_signals.c).
        .target(name: "CDaemonSignals"),
        // <sys/epoll.h>, which Swift's Glibc module leaves out, for the benchmark's subscriber threads.
        .systemLibrary(name: "CEpoll"),
        // renameat2(2) (RENAME_EXCHANGE, RENAME_NOREPLACE), which Swift's Glibc module leaves out, for the daemon's
        // scene-file writes (§3: an app's write that lands just before the daemon's rename is never lost).
        .target(name: "CRenameAt2"),
        // sync_file_range(2), which Swift's Glibc module also leaves out: a snapshot starts the disk's writeback of
        // what it has written while it encodes the rest, so that its final fsync waits for little.
        .target(name: "CSyncFileRange"),
        .target(
            name: "SceneSyncCore",
            swiftSettings: coreSettings
        ),
        // POSIX threads for the waits that must stay off the cooperative pool: the daemon's and the benchmark's.
        .target(name: "SceneSyncThreads", swiftSettings: strict),
        // A private PostgreSQL (initdb, pg_ctl, TLS certificates) for the integration tests and the cluster
        // benchmark; linked by no shipped binary.
        .target(name: "SceneSyncTestKit", dependencies: ["SceneSyncThreads"], swiftSettings: strict),
        .target(
            name: "SceneSyncDaemon",
            dependencies: [
                "SceneSyncCore",
                "SceneSyncThreads",
                "CSystemd",
                "CRenameAt2",
                "CSyncFileRange",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "Yams", package: "Yams"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            swiftSettings: engineSettings
        ),
        // Replication across hosts through PostgreSQL (SPEC §9), kept out of SceneSyncDaemon.
        .target(
            name: "SceneSyncReplication",
            dependencies: [
                "SceneSyncCore",
                "SceneSyncDaemon",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "SceneSyncClient",
            dependencies: [
                "SceneSyncCore",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "scenesyncd",
            dependencies: [
                "SceneSyncDaemon",
                "SceneSyncReplication",
                "CDaemonSignals",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strict,
            linkerSettings: staticRuntime
        ),
        .executableTarget(
            name: "scenesync",
            dependencies: [
                "SceneSyncClient",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strict,
            linkerSettings: staticRuntime
        ),
        .executableTarget(
            name: "scenesync-bench",
            dependencies: [
                "SceneSyncCore",
                "SceneSyncClient",
                "SceneSyncThreads",
                "SceneSyncTestKit",
                "CEpoll",
                "CRenameAt2",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                // The cluster scenario's floor: PostgreSQL's own LISTEN/NOTIFY round trip.
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "SceneSyncCoreTests", dependencies: ["SceneSyncCore", "SceneSyncTestKit"],
            swiftSettings: testSettings),
        .testTarget(
            name: "SceneSyncDaemonTests",
            dependencies: [
                "SceneSyncDaemon", "SceneSyncTestKit", "SceneSyncThreads",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOTestUtils", package: "swift-nio"),
                .product(name: "ServiceLifecycleTestKit", package: "swift-service-lifecycle"),
            ],
            swiftSettings: testSettings),
        .testTarget(
            name: "SceneSyncClientTests",
            dependencies: [
                "SceneSyncClient", "SceneSyncTestKit", .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOTestUtils", package: "swift-nio"),
            ],
            swiftSettings: testSettings),
        .testTarget(
            name: "SceneSyncReplicationTests", dependencies: ["SceneSyncReplication", "SceneSyncCore"],
            swiftSettings: testSettings),
        // The example app of the README and the DocC catalog; ExampleAppTests drives two copies of it.
        .executableTarget(
            name: "recipe-windows",
            dependencies: ["SceneSyncClient"],
            path: "Examples/RecipeWindows",
            swiftSettings: strict
        ),
        // The README's "Integrating your app" code with a harness around it; ReadmeTests checks that it is the
        // README's code, byte for byte, and runs it against a real daemon.
        .executableTarget(
            name: "readme-integration",
            dependencies: ["SceneSyncClient"],
            path: "Examples/ReadmeIntegration",
            swiftSettings: strict
        ),
        .testTarget(
            name: "IntegrationTests",
            dependencies: ["SceneSyncCore", "SceneSyncClient", "SceneSyncTestKit"],
            swiftSettings: testSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)

if microbenchmarks {
    package.dependencies.append(
        .package(url: "https://github.com/ordo-one/benchmark.git", from: "1.38.1", traits: ["MallocInterposer"]))
    package.targets.append(
        .executableTarget(
            name: "CoreMicrobenchmarks",
            dependencies: ["SceneSyncCore", .product(name: "Benchmark", package: "benchmark")],
            path: "Benchmarks/CoreMicrobenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ))
}
