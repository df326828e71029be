import NIOCore
import SceneSyncCore

@testable import SceneSyncDaemon

/// The end of a schedule: everything left runs until the engine is quiet, as a daemon's would be.
extension HarnessSchedule {
    /// Runs everything that is left, with time passing for the engine's timers and the housekeeping tick retrying
    /// what failed, until nothing is pending; then asks the engine to settle and checks that it does.
    mutating func settle() throws {
        trace.append("settle")
        stepIsOneFileCall = false
        harness.faults.disarm()
        harness.listingFails(false)
        for _ in 0..<100 {
            harness.send(.turnEnded)
            harness.send(.drainWatcher)
            harness.tick()
            harness.passTime(.seconds(2))
            // The clients read until nothing more comes: each read makes room for the next of their requests.
            var read = true
            while read {
                harness.drainEverything()
                try afterStep()
                try lagging.read(harness.core)
                read = false
                for index in clients.indices where clients[index].outbox.pendingBytes > 0 {
                    try readAnswers(of: index)
                    read = true
                }
            }
            // A rescan owed after a failed listing is retried at a tick that finds no step running; the daemon's
            // housekeeping ticks every second until one does.
            let owesRescan = harness.core.sceneFiles.rescanOwed != nil
            if clients.allSatisfy(\.isSettled), !owesRescan, harness.waiting.isEmpty, harness.finished.isEmpty { break }
        }
        let settled = HarnessMailbox<Void>()
        let promise = harness.loop.makePromise(of: Void.self)
        promise.futureResult.whenSuccess { settled.post(()) }
        harness.send(.settle(promise))
        harness.drainEverything()
        try afterStep()
        for index in clients.indices { try readAnswers(of: index) }
        try lagging.read(harness.core)
        if settled.takeAll().isEmpty { fail("never settles: the engine's settle is not answered") }
        for (index, client) in clients.enumerated() where !client.isSettled {
            fail(
                "never settles: client \(index)'s connection is stuck with \(client.socket.count) requests in its "
                    + "socket, \(client.gate.pending.count) read and not served, \(client.answers.count) of "
                    + "\(client.sent.count) answers read")
        }
    }
}
