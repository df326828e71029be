import Foundation
import SceneSyncTestKit
import Testing

/// The engine's simulation: seeded schedules of the real ``EngineCore`` and the per-connection policy (see
/// ``EngineHarness`` and ``HarnessSchedule``). `make test` runs 200 of them; `make simulate` runs them open-ended
/// from a random first seed. A failure names its seed: `SCENESYNC_HARNESS_SEED=<seed> swift test --filter
/// EngineHarnessTests` replays it alone and prints every step; `SCENESYNC_HARNESS_SEEDS=<n>` runs more (0: until
/// interrupted), from `SCENESYNC_HARNESS_FIRST_SEED` if given.
@Suite struct EngineHarnessTests {
    /// Steps of one schedule before it settles.
    static let stepsPerSchedule = 60

    @Test func seededSchedulesOfTheRealEngineKeepTheContract() async throws {
        let environment = ProcessInfo.processInfo.environment
        let replay = environment["SCENESYNC_HARNESS_SEED"].flatMap(UInt64.init)
        let count = environment["SCENESYNC_HARNESS_SEEDS"].flatMap(UInt64.init) ?? 200
        let first =
            replay ?? environment["SCENESYNC_HARNESS_FIRST_SEED"].flatMap(UInt64.init)
            ?? (count == 0 ? UInt64.random(in: 1...(1 << 40)) : 1)
        if replay == nil, count == 0 { print("simulating from seed \(first), until interrupted") }
        // On a thread of its own: the embedded loop is used from the thread that made it, and a schedule blocks.
        let failure = try await onThreadOfItsOwn(named: "engine harness") { () throws -> String? in
            var seed = first
            while replay != nil ? seed == first : count == 0 || seed < first + count {
                let schedule = try Self.run(seed: seed)
                if replay != nil { print((schedule.trace + schedule.historyLines()).joined(separator: "\n")) }
                if let violation = schedule.violation {
                    let command = "SCENESYNC_HARNESS_SEED=\(seed) swift test --filter EngineHarnessTests"
                    return "seed \(seed) (after \(seed - first + 1) schedules): \(violation); replay: \(command)"
                }
                if count == 0, (seed - first + 1) % 10_000 == 0 { print("\(seed - first + 1) schedules, all kept") }
                seed += 1
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
