import Synchronization
import Testing

@testable import SceneSyncDaemon

/// A `SIGHUP` and a `reload` request at once must not interleave, or the older file could be applied last.
@Suite struct ReloadQueueTests {
    /// What the bodies saw: the order they began in, and the most that ever ran at once.
    final class Trace: Sendable {
        struct Value {
            var began: [Int] = []
            var running = 0
            var mostAtOnce = 0
        }
        let value = Mutex(Value())

        func begin(_ id: Int) {
            value.withLock {
                $0.began.append(id)
                $0.running += 1
                $0.mostAtOnce = max($0.mostAtOnce, $0.running)
            }
        }

        func end() { value.withLock { $0.running -= 1 } }
    }

    @Test func reloadsRunOneAtATimeInTheOrderAskedFor() async throws {
        let queue = ReloadQueue()
        let trace = Trace()
        let (firstMayEnd, release) = AsyncStream.makeStream(of: Void.self)
        let (firstBegan, began) = AsyncStream.makeStream(of: Void.self)

        let first = Task {
            await queue.run {
                trace.begin(1)
                began.yield()
                for await _ in firstMayEnd { break }
                trace.end()
                return 1
            }
        }
        for await _ in firstBegan { break }
        var later: [Task<Int, Never>] = []
        for id in 2...4 {
            later.append(
                Task {
                    await queue.run {
                        trace.begin(id)
                        await Task.yield()
                        trace.end()
                        return id
                    }
                })
            // Each waits its turn before the next is asked for, so the order asked for is known.
            while queue.waitingCount < id - 1 { await Task.yield() }
        }
        #expect(trace.value.withLock { $0.began } == [1], "none began while the first ran")
        release.yield()
        #expect(await first.value == 1)
        for (index, task) in later.enumerated() { #expect(await task.value == index + 2) }
        #expect(trace.value.withLock { $0.began } == [1, 2, 3, 4])
        #expect(trace.value.withLock { $0.mostAtOnce } == 1)
        #expect(queue.waitingCount == 0)
    }

    @Test func aReloadAloneRunsAtOnce() async {
        let queue = ReloadQueue()
        #expect(await queue.run { 7 } == 7)
        #expect(await queue.run { 8 } == 8)
    }
}
