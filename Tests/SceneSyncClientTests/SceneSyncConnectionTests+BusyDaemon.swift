import Foundation
import NIOCore
import Testing

@testable import SceneSyncClient

/// A daemon too busy to accept makes a non-blocking `connect(2)` fail with `EAGAIN` at once: that is no missing
/// daemon (which the CLI reports with exit status 3), and the connection is made once the daemon accepts.
extension SceneSyncConnectionTests {
    @Test func aFullListenQueueIsWaitedOutNotTakenForNoDaemon() async throws {
        let fake = try FakeDaemon(backlog: 0)
        defer { fake.stop() }
        let fillers = try fake.fillBacklog()
        defer { for fd in fillers { Foundation.close(fd) } }
        // A wait no load on the test machine can exhaust: what is checked is that `EAGAIN` is tried again.
        let connecting = Task { try await SceneSyncConnection.openChannel(fake.path, busyWait: .seconds(600)) }
        // Gives the first attempts the time to find the queue full (on a loaded machine they may come later, and the
        // test then checks less, never wrongly); accepting then makes room.
        try await Task.sleep(for: .milliseconds(200))
        fake.serve(Array(repeating: { _ in }, count: fillers.count + 1))
        // The fake closes its side at once; closing ours then is no error.
        try await connecting.value.executeThenClose { _, _ in }
    }

    @Test func aListenQueueThatStaysFullIsReportedAsSuch() async throws {
        let fake = try FakeDaemon(backlog: 0)
        defer { fake.stop() }
        let fillers = try fake.fillBacklog()
        defer { for fd in fillers { Foundation.close(fd) } }
        do {
            _ = try await SceneSyncConnection.openChannel(fake.path, busyWait: .milliseconds(50))
            Issue.record("connected although nothing accepts")
        } catch let SceneSyncConnectionError.connectFailed(path, reason) {
            #expect(path == fake.path)
            #expect(reason.contains("queue of new connections stayed full"))
        }
    }
}
