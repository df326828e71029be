import SceneSyncThreads
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Many subscriber connections, split over a few reader threads (one per few hundred subscribers).
///
/// Every connection subscribes to `*` without the initial state and has seen `synced` before the pool starts, so
/// what the readers count afterwards is live changes only.
final class SubscriberPool {
    private let shards: [SubscriberShard]
    private var threads: [PosixThread] = []

    /// Connects and subscribes `count` clients; the reader threads start with `start()`.
    init(
        socketPath: String, count: Int, threads: Int?, mode: SubscriberMode, stamps: StampTable,
        protocol: SubscriberProtocol = .scenesync
    ) throws(BenchError) {
        var connections: [SubscriberShard.Connection] = []
        connections.reserveCapacity(count)
        do throws(BenchError) {
            // All requests first, then all answers: a thousand subscribers are set up in one round trip's time.
            let request = `protocol`.subscribeRequest
            for _ in 0..<count {
                let fd = try UnixSocket.connect(socketPath)
                connections.append(SubscriberShard.Connection(fd: fd))
                if !request.isEmpty { try UnixSocket.sendAll(fd, request) }
            }
            for index in connections.indices {
                connections[index].partial = try Self.readUntilSynced(connections[index].fd, protocol: `protocol`)
                UnixSocket.setNonBlocking(connections[index].fd)
            }
        } catch {
            for connection in connections { close(connection.fd) }
            throw error
        }
        let threadCount = max(1, min(count, threads ?? min(4, (count + 249) / 250)))
        var shards: [SubscriberShard] = []
        for thread in 0..<threadCount {
            let share = stride(from: thread, to: connections.count, by: threadCount).map { connections[$0] }
            shards.append(SubscriberShard(connections: share, mode: mode, stamps: stamps, protocol: `protocol`))
        }
        self.shards = shards
    }

    var threadCount: Int { shards.count }

    func start() {
        for shard in shards { threads.append(PosixThread.startOrExit { shard.run() }) }
    }

    /// The lowest revision every open subscriber has received.
    var minimumRevision: UInt64 {
        shards.reduce(UInt64.max) { min($0, $1.minimumRevision.load(ordering: .relaxed)) }
    }

    /// Waits until every subscriber has `revision`; `false` on timeout.
    func waitFor(revision: UInt64, timeout: Double) -> Bool {
        let deadline = Monotonic.now() + Int64(timeout * 1e9)
        while Monotonic.now() < deadline {
            if minimumRevision >= revision { return true }
            usleep(500)
        }
        return minimumRevision >= revision
    }

    /// Stops and joins the readers and merges what they counted.
    func stop() -> SubscriberTotals {
        for shard in shards { shard.stop() }
        for thread in threads { thread.join() }
        threads = []
        var totals = SubscriberTotals()
        for shard in shards { totals.merge(shard.totals) }
        return totals
    }

    func lostFiles(finalSequences: [Int]) -> Int {
        shards.reduce(0) { $0 + $1.lostFiles(finalSequences: finalSequences) }
    }

    /// Reads the `subscribe` response and the `synced` that ends the (empty) catch-up (or a peer's equivalent);
    /// returns the bytes after it.
    static func readUntilSynced(
        _ fd: Int32, protocol: SubscriberProtocol = .scenesync, timeout: Double = 60
    ) throws(BenchError) -> [UInt8] {
        var received: [UInt8] = []
        let marker = `protocol`.syncedMarker
        let deadline = Monotonic.now() + Int64(timeout * 1e9)
        var chunk = [UInt8](repeating: 0, count: 4096)
        while Monotonic.now() < deadline {
            if let range = firstRange(of: marker, in: received),
                let newline = received[range.upperBound...].firstIndex(of: 0x0A)
            {
                if firstRange(of: `protocol`.errorMarker, in: received) != nil {
                    throw BenchError("subscribe failed: \(String(decoding: received.prefix(300), as: UTF8.self))")
                }
                return Array(received[(newline + 1)...])
            }
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, 100) > 0 else { continue }
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else {
                throw BenchError(
                    "the daemon closed a subscriber: \(String(decoding: received.prefix(300), as: UTF8.self))")
            }
            received.append(contentsOf: chunk[0..<count])
        }
        throw BenchError("no synced event within \(Int(timeout)) s of subscribing")
    }

    static func firstRange(of pattern: [UInt8], in bytes: [UInt8]) -> Range<Int>? {
        guard bytes.count >= pattern.count else { return nil }
        for start in 0...(bytes.count - pattern.count) where bytes[start] == pattern[0] {
            if bytes[start..<(start + pattern.count)].elementsEqual(pattern) { return start..<(start + pattern.count) }
        }
        return nil
    }
}
