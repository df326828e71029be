import Foundation
import Testing

/// Seeded random schedules of every input of ``ConnectionOutput`` against a reference model (see
/// ``OutputSchedule``). A failure names its seed; `SCENESYNC_OUTPUT_SEED=<seed> swift test --filter
/// ConnectionOutputScheduleTests` replays it alone.
@Suite struct ConnectionOutputScheduleTests {
    static let stepsPerSchedule = 150

    @Test func seededSchedulesKeepTheBounds() {
        let environment = ProcessInfo.processInfo.environment
        let seeds: [UInt64]
        if let replay = environment["SCENESYNC_OUTPUT_SEED"].flatMap(UInt64.init) {
            seeds = [replay]
        } else {
            let count = environment["SCENESYNC_OUTPUT_SEEDS"].flatMap(UInt64.init) ?? 2_000
            seeds = Array(1...max(1, count))
        }
        var coverage = OutputSchedule.Coverage()
        for seed in seeds {
            let schedule = Self.run(seed: seed)
            if let violation = schedule.violation {
                Issue.record("seed \(seed): \(violation)")
                return
            }
            coverage.add(schedule.coverage)
        }
        guard seeds.count > 1 else { return }
        // The schedules reach every bound and every wake-up, often: otherwise the checks above prove little.
        #expect(coverage.lags > 1_000, "\(coverage)")
        #expect(coverage.droppedWhileLagging > 1_000, "\(coverage)")
        #expect(coverage.readerBlocked > 1_000, "\(coverage)")
        #expect(coverage.readerReleased > 500, "\(coverage)")
        #expect(coverage.writerWoken > 1_000, "\(coverage)")
        #expect(coverage.stalled > 1_000, "\(coverage)")
        #expect(coverage.refusedAfterClose > 1_000, "\(coverage)")
    }

    static func run(seed: UInt64) -> OutputSchedule {
        var schedule = OutputSchedule(seed: seed)
        for _ in 0..<stepsPerSchedule where schedule.violation == nil {
            schedule.step()
        }
        if schedule.violation == nil { schedule.drain() }
        return schedule
    }
}
