import Dispatch
import Histogram
import Logging
import PostgresNIO
import SceneSyncTestKit
import Synchronization

/// PostgreSQL's own `LISTEN`/`NOTIFY` round trip, the floor of the cluster scenario: one connection listens,
/// another sends `NOTIFY` at a steady rate, each stamped just before it is sent; latency is send → receipt.
/// Replication carries every change through a `NOTIFY` and at least one query, so it cannot beat this.
enum NotifyFloor {
    static let channel = "scenesync_bench"

    /// Runs on Swift concurrency's pool and waits for it on this (non-pool) thread.
    static func measure(socketPath: String, rate: Int, count: Int) throws(BenchError) -> Histogram<UInt64> {
        let outcome = Mutex<Result<Histogram<UInt64>, BenchError>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            let result: Result<Histogram<UInt64>, BenchError>
            do {
                result = .success(try await run(socketPath: socketPath, rate: rate, count: count))
            } catch {
                result = .failure(BenchError("NOTIFY round trip: \(String(reflecting: error))"))
            }
            outcome.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        let result = outcome.withLock { $0 }
        switch result {
        case .success(let histogram): return histogram
        case .failure(let error): throw error
        case nil: throw BenchError("NOTIFY round trip: no result")
        }
    }

    private static func run(socketPath: String, rate: Int, count: Int) async throws -> Histogram<UInt64> {
        let logger = {
            var logger = Logger(label: "scenesync-bench.notify")
            logger.logLevel = .critical
            return logger
        }()
        let configuration = PostgresConnection.Configuration(
            unixSocketPath: socketPath, username: PrivatePostgres.user, password: nil, database: "postgres")
        let listener = try await PostgresConnection.connect(configuration: configuration, id: 1, logger: logger)
        let sender: PostgresConnection
        do {
            sender = try await PostgresConnection.connect(configuration: configuration, id: 2, logger: logger)
        } catch {
            try? await listener.close()  // the sender's connect error, thrown next, is the one that matters
            throw error
        }
        let stamps = StampTable(capacity: count + 1)
        let outcome: Result<Histogram<UInt64>, any Error>
        do {
            outcome = .success(
                try await listener.listen(on: channel) { notifications in
                    try await withThrowingTaskGroup(of: Histogram<UInt64>?.self) { group in
                        group.addTask {
                            var histogram = Histogram<UInt64>.latency()
                            var received = 0
                            for try await notification in notifications {
                                let now = Monotonic.now()
                                if let sequence = Int(notification.payload), sequence > 0, sequence <= count {
                                    histogram.record(nanoseconds: now - stamps.get(sequence))
                                }
                                received += 1
                                if received == count { break }
                            }
                            return histogram
                        }
                        group.addTask {
                            let interval = 1e9 / Double(max(1, rate))
                            let start = Monotonic.now()
                            for sequence in 1...count {
                                let wait = start + Int64(Double(sequence - 1) * interval) - Monotonic.now()
                                if wait > 0 { try await Task.sleep(for: .nanoseconds(wait)) }
                                stamps.set(sequence, Monotonic.now())
                                try await sender.query(
                                    PostgresQuery(unsafeSQL: "NOTIFY \(channel), '\(sequence)'"), logger: logger)
                            }
                            return nil
                        }
                        group.addTask {
                            // A lost notification would otherwise keep the receiver waiting forever.
                            try await Task.sleep(for: .seconds(Double(count) / Double(max(1, rate)) + 30))
                            throw BenchError("not every notification arrived within 30 s of the last")
                        }
                        while let finished = try await group.next() {
                            if let histogram = finished {
                                group.cancelAll()
                                return histogram
                            }
                        }
                        throw BenchError("the notification stream ended")
                    }
                })
        } catch {
            outcome = .failure(error)
        }
        // The measurement is over and the private server is stopped after it: a failed close loses nothing.
        try? await sender.close()
        try? await listener.close()  // as above
        return try outcome.get()
    }
}
