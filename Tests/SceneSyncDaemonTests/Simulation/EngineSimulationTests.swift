import Foundation
import SceneSyncTestKit
import Testing

/// Seeded schedules of the engine's pure parts (see ``EngineSimulation``). `make test` runs 10,000 of them;
/// `make simulate` runs them open-ended from a random first seed. A failure names its seed:
/// `SCENESYNC_SIMULATION_SEED=<seed> swift test --filter EngineSimulationTests` replays it alone and prints every
/// step.
@Suite struct EngineSimulationTests {
    /// Steps of one schedule before it settles.
    static let stepsPerSchedule = 80

    @Test func seededSchedulesKeepTheContract() async throws {
        let environment = ProcessInfo.processInfo.environment
        if let replay = environment["SCENESYNC_SIMULATION_SEED"].flatMap(UInt64.init) {
            let simulation = try Self.run(seed: replay, tracing: true)
            print((simulation.trace ?? []).joined(separator: "\n"))
            #expect(simulation.violation == nil, "seed \(replay): \(simulation.violation ?? "")")
            return
        }
        // 0: open-ended (`make simulate`), from a random first seed unless one is given.
        let count = environment["SCENESYNC_SIMULATION_SEEDS"].flatMap(UInt64.init) ?? 10_000
        let first =
            environment["SCENESYNC_SIMULATION_FIRST_SEED"].flatMap(UInt64.init)
            ?? (count == 0 ? UInt64.random(in: 1...(1 << 40)) : 1)
        if count == 0 { print("simulating from seed \(first), until interrupted") }
        let failure = try await onThreadOfItsOwn(named: "simulation") { () throws -> String? in
            var seed = first
            while count == 0 || seed < first + count {
                let simulation = try Self.run(seed: seed)
                if let violation = simulation.violation {
                    let replay = "SCENESYNC_SIMULATION_SEED=\(seed) swift test --filter EngineSimulationTests"
                    return "seed \(seed) (after \(seed - first + 1) schedules): \(violation); replay: \(replay)"
                }
                if count == 0, (seed - first + 1) % 100_000 == 0 { print("\(seed - first + 1) schedules, all kept") }
                seed += 1
            }
            return nil
        }
        if let failure { Issue.record(Comment(rawValue: failure)) }
    }

    static func run(seed: UInt64, tracing: Bool = false) throws -> EngineSimulation {
        var simulation = try EngineSimulation(seed: seed, tracing: tracing)
        for _ in 0..<stepsPerSchedule where simulation.violation == nil {
            simulation.step()
        }
        if simulation.violation == nil { simulation.settle() }
        return simulation
    }
}
