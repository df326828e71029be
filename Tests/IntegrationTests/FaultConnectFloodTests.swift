import Foundation
import SceneSyncTestKit
import Testing

/// Anyone who can open the socket can connect and hang up in a loop. Each such client is gone before the daemon
/// reads its credentials; that is not a fault, and whatever a client can make the daemon log is rate-limited, so
/// the log cannot be flooded.
@Suite struct FaultConnectFloodTests {
    static let cycles = 20_000

    @Test func quickConnectAndCloseCyclesAddAtMostAFewLogLines() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.cleanup() }
        try await daemon.start()
        let client = try await daemon.connect()
        _ = try await client.ok("stats")
        let before = daemon.stderrText.split(separator: "\n").count

        let path = daemon.socketPath
        let failures = try await onThreadOfItsOwn(named: "connect-flood") { () -> Int in
            var failures = 0
            for _ in 0..<Self.cycles {
                let (fd, _) = SocketClient.openConnection(path: path, timeout: .seconds(10))
                if fd < 0 { failures += 1 } else { close(fd) }
            }
            return failures
        }
        #expect(failures == 0, "\(failures) of \(Self.cycles) connections were refused")
        // Every one of them has been served and closed once the daemon counts only this client again.
        #expect(
            await eventually(timeout: .seconds(60)) {
                (try? await client.ok("stats"))?["clients"]?.uint64Value == 1
            }, "the flood's connections were not all closed")
        // The test daemon logs at debug, where such a client may show; what a daemon at its default level (info)
        // would log is what counts.
        let added = daemon.stderrText.split(separator: "\n").dropFirst(before).filter {
            !$0.contains(" debug scenesyncd: ") && !$0.contains(" trace scenesyncd: ")
        }
        #expect(added.count <= 6, "the flood added \(added.count) log lines: \(added.prefix(10))")
    }
}
