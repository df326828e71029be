import Foundation
import SceneSyncCore
import Testing

/// Signals at random moments from exec onwards (§7): never a death by signal; a SIGTERM before ready is still a
/// graceful shutdown that keeps the epoch; a SIGUSR1 or SIGHUP before ready is acted on once, once ready.
@Suite struct FaultSignalTests {
    /// When a round's signal is sent.
    enum Moment: CaseIterable, CustomStringConvertible {
        /// Pending from the daemon's first instruction: spawned with it blocked, sent right after the spawn.
        case atExec
        /// A few milliseconds after the spawn, once the daemon's own code handles it (before its first instruction
        /// every signal has its default action, which no program can change).
        case early
        /// Anywhere up to and around READY=1.
        case aroundReady

        var description: String {
            switch self {
            case .atExec: "at exec"
            case .early: "early"
            case .aroundReady: "around ready"
            }
        }
    }

    /// The packaged daemon (statically linked, as `make run` builds it too): no dynamic loader runs before its own
    /// code blocks the signals, so the window the kernel's `exec` leaves is as small as it gets.
    @Test func signalsFromExecOnwardsNeverKillAndAreActedOnOnce() async throws {
        var random = SeededRandom(seed: Fault.seed)
        let signals = [SIGUSR1, SIGHUP, SIGTERM]
        // Every signal at every moment at least once, whatever SCENESYNC_FAULT_ROUNDS asks for.
        let rounds = max(Fault.rounds(12), signals.count * Moment.allCases.count)
        let daemon = try DaemonProcess()
        defer { daemon.cleanup() }
        daemon.executable = try await Packaging.releaseDaemon()
        for index in 0..<200 { try daemon.writeScene("scene\(index)", "[\(index)]") }
        try await daemon.start()
        let epoch = try await daemon.connect().clock().epoch
        #expect(try await daemon.stop() == 0)
        var ran: [String: Int] = [:]
        var beforeOwnCode = 0

        for round in 0..<rounds {
            let signal = signals[round % 3]
            let moment = Moment.allCases[(round / 3) % 3]
            let context = "round \(round): signal \(signal) \(moment), seed \(Fault.seed)"
            let process = try daemon.launch(blockedSignals: moment == .atExec ? [signal] : [])
            switch moment {
            case .atExec:
                process.signal(signal)
            case .early, .aroundReady:
                // The moment itself is what the round varies.
                let delay =
                    moment == .early ? Int.random(in: 0...15, using: &random) : Int.random(in: 0...150, using: &random)
                try await Task.sleep(for: .milliseconds(delay))
                // §7 promises handling from the daemon's own first instruction. A loaded machine may not have run
                // that instruction yet after the delay; the round then sends its signal the moment it has.
                if Fault.handles(signal, pid: process.pid) != true {
                    beforeOwnCode += 1
                    let handled = await eventually(timeout: .seconds(10), every: .milliseconds(1)) {
                        Fault.handles(signal, pid: process.pid) == true
                    }
                    try #require(handled, "\(context): the daemon never blocked or caught the signal")
                }
                process.signal(signal)
            }
            ran["\(signal) \(moment)", default: 0] += 1

            if signal == SIGTERM {
                let termination = try await daemon.exit()
                #expect(termination == .exited(0), "\(context): \(termination)\n\(daemon.stderrText.suffix(1500))")
                try await daemon.start()
                #expect(
                    try await daemon.connect().clock().epoch == epoch, "\(context): the next start changed the epoch")
                #expect(try await daemon.stop() == 0, "\(context)")
                continue
            }
            do {
                try await daemon.waitUntilReady()
            } catch {
                Issue.record("\(context): \(error)")
                continue
            }
            let client = try await daemon.connect()
            if signal == SIGUSR1 {
                let written = await eventually(timeout: .seconds(10)) {
                    ((try? await client.stat("snapshots")) ?? 0) >= 1
                }
                #expect(written, "\(context): no snapshot after SIGUSR1")
                let stats = try await client.ok("stats")
                #expect(stats["snapshots"]?.uint64Value == 1, "\(context): \(stats.text)")
                #expect(stats["last_snapshot"]?["reason"]?.stringValue == "signal", "\(context)")
            } else {
                let notify = try #require(daemon.notify)
                #expect(
                    try await notify.waitFor("RELOADING=1", timeout: .seconds(10)) != nil,
                    "\(context): no reload after READY=1: \(notify.messages)")
            }
            let termination = try await daemon.stopped(SIGTERM)
            #expect(termination == .exited(0), "\(context): \(termination)")
        }
        for signal in signals {
            for moment in Moment.allCases {
                #expect(ran["\(signal) \(moment)", default: 0] >= 1, "no round sent signal \(signal) \(moment)")
            }
        }
        try await daemon.start()
        #expect(try await daemon.connect().clock().epoch == epoch, "the epoch changed over clean stops")
        print("FaultSignalTests: \(beforeOwnCode) of \(rounds) rounds waited for the daemon's first instruction")
    }
}
