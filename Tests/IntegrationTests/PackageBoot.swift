import Foundation
import Testing

/// One boot of a throwaway overlay of this machine (``PackageSystemServiceTests/machine(deb:)``) that installs the
/// `.deb`, runs the system service's checks, the metrics service's and an ordinary user's, and purges the package.
///
/// A boot costs far more than any check in it, so the package suites share it: the first test to ask boots the
/// machine, and each reads its own lines of the one outcome.
actor PackageBoot {
    private static let shared = PackageBoot()
    private var boot: Task<NspawnMachine.Outcome, any Error>? = nil

    /// The outcome of the one boot; fails (or, where containers were never meant to run, cancels) the calling
    /// test when containers cannot be booted.
    static func outcome() async throws -> NspawnMachine.Outcome {
        try await NspawnMachine.requireAvailable()
        let deb = try await Packaging.deb()
        return try await shared.outcome(deb: deb)
    }

    private func outcome(deb: URL) async throws -> NspawnMachine.Outcome {
        if let boot { return try await boot.value }
        let started = Task { try await PackageSystemServiceTests.machine(deb: deb).run(script: Self.script) }
        boot = started
        return try await started.value
    }

    /// The script's output, then the units' own journal lines (the system daemon's come early in a long journal
    /// and would otherwise be cut off), then the journal's end and the console.
    static func report(_ outcome: NspawnMachine.Outcome) -> String {
        let unitLines = outcome.journal.split(separator: "\n").filter {
            $0.contains("scenesync") && !$0.contains("pkgtest[")
        }
        return """
            output:
            \(outcome.output)
            scenesync in the journal:
            \(unitLines.joined(separator: "\n").suffix(12000))
            journal:
            \(outcome.journal.suffix(4000))
            console:
            \(outcome.console)
            """
    }

    static let script =
        PackageSystemServiceTests.prelude + PackageUserServiceTests.createUser
            + """
            changes() {
                # Files and symbolic links written to the root file system, and whiteouts of removed ones, but for
                # dpkg's own records, logs and caches, which Debian policy lets a purge leave behind, and the user's
                # home, which a purge never touches.
                cd \(NspawnMachine.changesDirectory) && find . ! -type d | sed 's|^\\./||' |
                    grep -v -E '^(var/lib/dpkg|var/log|var/cache|home)/' | sort
                cd /
            }
            changes > /run/changes-before
            dpkg -i \(PackageSystemServiceTests.machineDeb) > /run/dpkg.log 2>&1
            say "install-status: $?"
            sed 's/^/dpkg: /' /run/dpkg.log

            """
        + PackageSystemServiceTests.systemChecks + PackageUserServiceTests.userChecks
            + """
            dpkg --purge scenesync > /run/dpkg.log 2>&1
            say "purge-status: $?"
            sed 's/^/dpkg: /' /run/dpkg.log
            changes > /run/changes-after
            diff /run/changes-before /run/changes-after | grep '^[<>]' | sed 's/^/leftover: /'
            find /run -xdev -name '*scenesync*' | sed 's/^/leftover: /'
            say "purge-checked"
            """
}
