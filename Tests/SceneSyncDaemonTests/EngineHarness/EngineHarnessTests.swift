import Foundation
import SceneSyncTestKit
import Testing

/// Seeded schedules of the real ``EngineCore`` and the per-connection policy (see ``EngineHarness`` and
/// ``HarnessSchedule``): the engine itself, where `EngineSimulationTests` drives its pure parts. A failure names its
/// seed: `SCENESYNC_HARNESS_SEED=<seed> swift test --filter EngineHarnessTests` replays it alone and prints every
/// step; `SCENESYNC_HARNESS_SEEDS=<n>` runs more.
@Suite struct EngineHarnessTests {
    /// Steps of one schedule before it settles.
    static let stepsPerSchedule = 60

    @Test func seededSchedulesOfTheRealEngineKeepTheContract() async throws {
        let environment = ProcessInfo.processInfo.environment
        let replay = environment["SCENESYNC_HARNESS_SEED"].flatMap(UInt64.init)
        let count = environment["SCENESYNC_HARNESS_SEEDS"].flatMap(UInt64.init) ?? 200
        let seeds = replay.map { $0...$0 } ?? 1...max(1, count)
        // On a thread of its own: the embedded loop is used from the thread that made it, and a schedule blocks.
        let failure = try await onThreadOfItsOwn(named: "engine harness") { () throws -> String? in
            for seed in seeds {
                let schedule = try Self.run(seed: seed)
                if replay != nil { print((schedule.trace + schedule.historyLines()).joined(separator: "\n")) }
                if let violation = schedule.violation {
                    let command = "SCENESYNC_HARNESS_SEED=\(seed) swift test --filter EngineHarnessTests"
                    return "seed \(seed): \(violation); replay: \(command)"
                }
            }
            return nil
        }
        if let failure { Issue.record(Comment(rawValue: failure)) }
    }

    static func run(seed: UInt64) throws -> HarnessSchedule {
        var schedule = try HarnessSchedule(seed: seed)
        defer { schedule.harness.close() }
        for _ in 0..<stepsPerSchedule where schedule.violation == nil {
            try schedule.step()
        }
        if schedule.violation == nil { try schedule.settle() }
        if schedule.violation == nil { schedule.checkSettled() }
        return schedule
    }
}
