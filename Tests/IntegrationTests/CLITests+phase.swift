import Foundation
import SceneSyncCore
import Testing

extension CLITests {
    /// `get` shows the scene's last reported phase, and only once there is one; `--json` has it as the wire does.
    @Test func getShowsTheLastReportedPhase() async throws {
        try await withDaemon { daemon in
            try await ok(daemon, "set", "main", "[1]")
            let without = try await ok(daemon, "get", "main")
            #expect(without.lines.contains("depth     1"))
            #expect(!without.lines.contains { $0.hasPrefix("phase") }, "\(without)")
            #expect(try json(try await ok(daemon, "get", "main", "--json").stdout)["phase"] == nil)

            try await ok(daemon, "phase", "main", "inactive")
            let reported = try await ok(daemon, "get", "main")
            #expect(reported.lines.contains("phase     inactive"), "\(reported)")
            #expect(try json(try await ok(daemon, "get", "main", "--json").stdout)["phase"] == .string("inactive"))
        }
    }
}
