import Foundation
import Testing

/// What the machine the tests run on must be able to do.
///
/// Where CI runs (`CI=true`), every suite runs: a missing tool or a container that cannot boot fails the test that
/// needs it, with the reason, instead of leaving it out of a green run. Elsewhere (a developer's machine without
/// root or PostgreSQL) such a test is skipped or cancelled with the reason.
enum TestEnvironment {
    static let isCI = ProcessInfo.processInfo.environment["CI"] == "true"

    /// The cluster suites' trait: they run where PostgreSQL is installed, and always under CI, where a missing
    /// server is a failure naming what to install.
    static var postgres: ConditionTrait {
        .enabled(if: PostgresServer.isAvailable || isCI, "no PostgreSQL 15 or newer is installed")
    }

    /// Cancels the calling test with `reason` when it does not run as root; under CI, which runs as root, that is a
    /// failure instead.
    static func requireRoot(_ reason: String) throws {
        guard geteuid() != 0 else { return }
        if isCI { throw Unmet(reason + ", and this CI run is not root") }
        try Test.cancel(Comment(rawValue: reason))
    }

    struct Unmet: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }
}
