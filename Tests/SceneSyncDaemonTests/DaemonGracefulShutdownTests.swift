import Foundation
import Logging
import SceneSyncCore
import ServiceLifecycleTestKit
import Testing

@testable import SceneSyncDaemon

#if canImport(Glibc)
import Glibc
#endif

/// The service wiring, as an app that runs the daemon inside its own service group sees it: a graceful shutdown of
/// the surrounding task (swift-service-lifecycle's, here through its test kit's trigger) reaches every service, in
/// order, so the daemon ends on its own, with its final snapshot written and its socket gone.
@Suite struct DaemonGracefulShutdownTests {
    /// In a process of its own (an exit test), like ``DaemonThreadsTests``: the daemon takes the process's signals.
    @Test func aGracefulShutdownAroundTheDaemonEndsItWithItsFinalSnapshot() async {
        await #expect(processExitsWith: .success) {
            var template = Array("/tmp/ssgraceful.XXXXXX".utf8CString)
            guard let created = mkdtemp(&template) else { exit(2) }
            let root = String(cString: created)
            let socket = root + "/s.sock"
            guard mkdir(root + "/scenes", 0o755) == 0,
                FileManager.default.createFile(atPath: root + "/scenes/a.json", contents: Data("[1,2]".utf8))
            else { exit(3) }
            let configuration = DaemonConfiguration(
                defaults: PlatformDefaults(
                    scenesDirectory: root + "/scenes", stateDirectory: root + "/state",
                    configFile: root + "/none.yaml", socketPath: socket))
            let daemon = Daemon(
                configuration: configuration, overrides: ConfigurationOverrides(), environment: [:],
                logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() })
            // A shutdown that never reaches a service leaves the run waiting: that fails too, not hangs.
            Task {
                try await Task.sleep(for: .seconds(60))
                exit(7)
            }
            do {
                try await testGracefulShutdown { trigger in
                    async let run: Void = daemon.run()
                    // Listening once the socket is at its path; see DaemonThreadsTests for why it is not probed.
                    while !DaemonThreadsTests.isSocket(socket) {
                        try await Task.sleep(for: .milliseconds(5))  // a pause between checks of the condition
                    }
                    trigger.triggerGracefulShutdown()
                    try await run
                }
            } catch {
                exit(4)
            }
            // The socket is removed, and the final snapshot holds the scene the start-up merge found (r1).
            if DaemonThreadsTests.isSocket(socket) { exit(5) }
            let snapshot = root + "/state/snapshots/" + Snapshot.fileName(revision: 1)
            guard let bytes = FileManager.default.contents(atPath: snapshot) else { exit(6) }
            let text = String(decoding: bytes, as: UTF8.self)
            guard text.contains(#""reason":"shutdown""#), text.contains(#""content":[1,2]"#) else { exit(8) }
            try? FileManager.default.removeItem(atPath: root)  // a temp directory; the system cleans up too
            exit(0)
        }
    }
}
