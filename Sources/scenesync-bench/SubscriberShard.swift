import CEpoll
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The subscribers one reader thread serves: it waits in `poll` on all of them and, per event, finds the newline,
/// reads the revision at the offset where it stood in the previous event, and looks up the send time. No JSON is
/// parsed, nothing is allocated, and the clock is read once per `recv`, so the reader stays far cheaper than the
/// daemon it measures.
final class SubscriberShard: @unchecked Sendable {
    struct Connection {
        var fd: Int32
        /// The unfinished last line of the previous `recv`.
        var partial: [UInt8] = []
        var lastRevision: UInt64 = 0
        /// Where the revision's digits started in the previous `change` event (0: not known yet).
        var revisionOffset = 0
        /// File mode: the newest sequence seen per file.
        var lastSequence: [Int] = []
    }

    private var connections: [Connection]
    private let mode: SubscriberMode
    private let wire: SubscriberProtocol
    private let stamps: StampTable
    private(set) var totals = SubscriberTotals()
    private let stopping = Atomic<Bool>(false)
    /// The lowest revision every open connection has received, for the writer's flow control.
    let minimumRevision = Atomic<UInt64>(0)

    private static let bufferSize = 1 << 20

    init(connections: [Connection], mode: SubscriberMode, stamps: StampTable, protocol: SubscriberProtocol) {
        self.connections = connections
        self.mode = mode
        self.wire = `protocol`
        self.stamps = stamps
        if case .fileSequences(let files) = mode {
            // The write before a file's first is virtual: sequence f + 1 - files.
            let initial = (0..<files).map { $0 + 1 - files }
            for index in self.connections.indices { self.connections[index].lastSequence = initial }
        }
    }

    deinit {
        for connection in connections { close(connection.fd) }
    }

    func stop() { stopping.store(true, ordering: .releasing) }

    /// The reader thread's loop, until `stop()`. epoll rather than poll: with a few hundred connections per
    /// thread, poll's scan of every descriptor on every wake-up cost the reader more than the events did.
    func run() {
        let cpuStart = Monotonic.threadCPU()
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.bufferSize, alignment: 16)
        defer { buffer.deallocate() }
        // The hot state lives in locals for the duration of the loop: no class-field exclusivity checks per event.
        var connections = self.connections
        var totals = SubscriberTotals()
        var open = [Bool](repeating: true, count: connections.count)
        let poller = epoll_create1(Int32(EPOLL_CLOEXEC))
        defer { if poller >= 0 { close(poller) } }
        for (index, connection) in connections.enumerated() {
            var event = epoll_event()
            event.events = EPOLLIN.rawValue
            event.data.u64 = UInt64(index)
            if poller < 0 || epoll_ctl(poller, EPOLL_CTL_ADD, connection.fd, &event) != 0 {
                open[index] = false
                totals.closed += 1
            }
        }
        var events = [epoll_event](repeating: epoll_event(), count: 256)
        while !stopping.load(ordering: .acquiring) {
            let ready = Int(epoll_wait(poller, &events, Int32(events.count), 5))
            for slot in 0..<max(0, ready) {
                let index = Int(events[slot].data.u64)
                guard open[index] else { continue }
                if !receive(&connections[index], buffer, &totals) {
                    epoll_ctl(poller, EPOLL_CTL_DEL, connections[index].fd, nil)
                    open[index] = false
                    totals.closed += 1
                }
            }
            var lowest = UInt64.max
            for index in connections.indices where open[index] {
                lowest = min(lowest, connections[index].lastRevision)
            }
            minimumRevision.store(lowest, ordering: .relaxed)
        }
        totals.cpuNanoseconds = Monotonic.threadCPU() - cpuStart
        self.connections = connections
        self.totals = totals
    }

    /// One `recv` and every complete line in it. `false` when the daemon closed the connection.
    private func receive(
        _ connection: inout Connection, _ buffer: UnsafeMutableRawBufferPointer, _ totals: inout SubscriberTotals
    ) -> Bool {
        guard let base = buffer.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return false }
        var carried = connection.partial.count
        if carried > buffer.count / 2 {
            // A line this long is no event of ours; drop it rather than grow.
            connection.partial.removeAll()
            carried = 0
        }
        if carried > 0 {
            connection.partial.withUnsafeBytes { raw in
                if let source = raw.baseAddress {
                    UnsafeMutableRawPointer(base).copyMemory(from: source, byteCount: carried)
                }
            }
        }
        let count = recv(connection.fd, base + carried, buffer.count - carried, Int32(MSG_DONTWAIT))
        if count <= 0 {
            return count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
        }
        let now = Monotonic.now()
        totals.bytes += count
        let total = carried + count
        var start = 0
        while start < total, let found = memchr(base + start, 0x0A, total - start) {
            let end = UnsafeMutableRawPointer(found).assumingMemoryBound(to: UInt8.self) - base
            handleLine(base + start, end - start, &connection, now, &totals)
            start = end + 1
        }
        connection.partial.removeAll(keepingCapacity: true)
        if start < total {
            connection.partial.append(contentsOf: UnsafeBufferPointer(start: base + start, count: total - start))
        }
        return true
    }

    @inline(__always)
    private func handleLine(
        _ line: UnsafeMutablePointer<UInt8>, _ length: Int, _ connection: inout Connection, _ now: Int64,
        _ totals: inout SubscriberTotals
    ) {
        switch wire {
        case .scenesync: break
        case .redis:
            // A message's payload line: @N …
            guard length > 1, line[0] == UInt8(ascii: "@") else { return }
            let revision = UInt64(Self.number(line, from: 1, length))
            guard accept(revision: revision, &connection, now, &totals) else { return }
            record(key: Int(truncatingIfNeeded: revision), now, &totals)
            return
        case .relay:
            guard let stamp = Self.findBackwards(line, length) else { return }
            acceptFile(stamp: stamp, line, length, &connection, now, &totals)
            return
        case .watchman(_, let latest):
            handleWatchman(line, length, latest, &connection, now, &totals)
            return
        }
        // {"event":"change",… — the event name starts at byte 10; responses start {"id".
        guard length > 16, line[2] == UInt8(ascii: "e") else { return }
        switch line[10] {
        case UInt8(ascii: "c") where line[11] == UInt8(ascii: "h"):
            handleChange(line, length, &connection, now, &totals)
        case UInt8(ascii: "r"):
            // A resync restarts the subscription's sequence: the next change is not checked for a gap.
            totals.resyncs += 1
            connection.lastRevision = 0
        default:
            return
        }
    }

    @inline(__always)
    private func handleChange(
        _ line: UnsafeMutablePointer<UInt8>, _ length: Int, _ connection: inout Connection, _ now: Int64,
        _ totals: inout SubscriberTotals
    ) {
        var offset = connection.revisionOffset
        if offset == 0 || offset >= length || !Self.isRevisionKey(line, before: offset) {
            guard let found = Self.find(Self.revisionKey, in: line, length) else { return }
            offset = found + Self.revisionKey.count
            connection.revisionOffset = offset
        }
        let revision = UInt64(Self.number(line, from: offset, length))
        guard accept(revision: revision, &connection, now, &totals) else { return }
        switch mode {
        case .revisions(let base):
            record(key: Int(truncatingIfNeeded: revision &- base), now, &totals)
        case .fileSequences:
            // The stamp sits near the end: …"path":[…,{"value":{"s":S,"f":F}}],"origin":{…}}
            guard let stamp = Self.findBackwards(line, length) else { return }
            guard let sequence = fileSequence(stamp: stamp, line, length, &connection, &totals) else { return }
            record(key: sequence, now, &totals)
        }
    }

    /// Counts a revision as delivered unless it repeats one; counts the revisions skipped before it as gaps.
    @inline(__always)
    private func accept(
        revision: UInt64, _ connection: inout Connection, _ now: Int64, _ totals: inout SubscriberTotals
    ) -> Bool {
        if revision <= connection.lastRevision {
            totals.duplicates += 1
            return false
        }
        if connection.lastRevision != 0, revision != connection.lastRevision + 1 {
            totals.gaps += Int(revision - connection.lastRevision - 1)
        }
        connection.lastRevision = revision
        totals.delivered += 1
        totals.lastReceipt = now
        return true
    }

    /// The sequence of the `{"s":S,"f":F}` stamp at `stamp`, unless its file already had it or a newer one (a
    /// skipped write of the same file is coalesced).
    @inline(__always)
    private func fileSequence(
        stamp: Int, _ line: UnsafeMutablePointer<UInt8>, _ length: Int, _ connection: inout Connection,
        _ totals: inout SubscriberTotals
    ) -> Int? {
        let sequence = Self.number(line, from: stamp + 5, length)
        var fileStart = stamp + 5
        while fileStart < length, line[fileStart] != UInt8(ascii: ":") { fileStart += 1 }
        return fileSequence(file: Self.number(line, from: fileStart + 1, length), sequence, &connection, &totals)
    }

    @inline(__always)
    private func fileSequence(
        file: Int, _ sequence: Int, _ connection: inout Connection, _ totals: inout SubscriberTotals
    ) -> Int? {
        guard case .fileSequences(let files) = mode, file >= 0, file < files else { return nil }
        let previous = connection.lastSequence[file]
        if sequence <= previous {
            totals.duplicates += 1
            return nil
        }
        totals.coalesced += (sequence - previous) / files - 1
        connection.lastSequence[file] = sequence
        return sequence
    }

    /// A peer's file event (no revisions): the newest sequence seen is the progress the writer waits for.
    @inline(__always)
    private func acceptFile(
        stamp: Int, _ line: UnsafeMutablePointer<UInt8>, _ length: Int, _ connection: inout Connection,
        _ now: Int64, _ totals: inout SubscriberTotals
    ) {
        guard let sequence = fileSequence(stamp: stamp, line, length, &connection, &totals) else { return }
        delivered(sequence: sequence, &connection, now, &totals)
    }

    @inline(__always)
    private func delivered(
        sequence: Int, _ connection: inout Connection, _ now: Int64, _ totals: inout SubscriberTotals
    ) {
        connection.lastRevision = max(connection.lastRevision, UInt64(sequence))
        totals.delivered += 1
        totals.lastReceipt = now
        record(key: sequence, now, &totals)
    }

    /// A watchman subscription PDU: `…"files":["latency-3.json",…]…`; the initial (fresh instance) one is skipped.
    private func handleWatchman(
        _ line: UnsafeMutablePointer<UInt8>, _ length: Int, _ latest: StampTable, _ connection: inout Connection,
        _ now: Int64, _ totals: inout SubscriberTotals
    ) {
        guard Self.find(Self.freshInstance, in: line, length) == nil,
            var index = Self.find(Self.filesKey, in: line, length)
        else { return }
        let prefix = Self.scenePrefix
        while index + prefix.count < length, line[index] != UInt8(ascii: "]") {
            if line[index] == prefix[0],
                (0..<prefix.count).allSatisfy({ line[index + $0] == prefix[$0] })
            {
                let file = Self.number(line, from: index + prefix.count, length)
                let sequence = Int(latest.get(file))
                // 0: a file's creation before the run, which watchman may report after the subscription started.
                if sequence > 0, let sequence = fileSequence(file: file, sequence, &connection, &totals) {
                    delivered(sequence: sequence, &connection, now, &totals)
                }
                index += prefix.count
            } else {
                index += 1
            }
        }
    }

    @inline(__always)
    private func record(key: Int, _ now: Int64, _ totals: inout SubscriberTotals) {
        let sent = stamps.get(key)
        if sent == 0 {
            totals.unstamped += 1
        } else {
            totals.histogram.record(nanoseconds: now - sent)
        }
    }

    // MARK: - Byte scanning

    private static let revisionKey = Array(#""revision":"#.utf8)
    private static let freshInstance = Array(#""is_fresh_instance":true"#.utf8)
    private static let filesKey = Array(#""files":["#.utf8)
    private static let scenePrefix = Array(#""latency-"#.utf8)

    /// Whether `"revision":` ends right before `offset` (five of its bytes suffice: the layout around it is fixed).
    @inline(__always)
    private static func isRevisionKey(_ line: UnsafeMutablePointer<UInt8>, before offset: Int) -> Bool {
        offset >= 11 && line[offset - 1] == UInt8(ascii: ":") && line[offset - 2] == UInt8(ascii: "\"")
            && line[offset - 3] == UInt8(ascii: "n") && line[offset - 10] == UInt8(ascii: "r")
            && line[offset - 11] == UInt8(ascii: "\"")
    }

    private static func find(_ pattern: [UInt8], in line: UnsafeMutablePointer<UInt8>, _ length: Int) -> Int? {
        guard length >= pattern.count else { return nil }
        var index = 0
        outer: while index <= length - pattern.count {
            for offset in 0..<pattern.count where line[index + offset] != pattern[offset] {
                index += 1
                continue outer
            }
            return index
        }
        return nil
    }

    /// The last `{"s":` in the line.
    @inline(__always)
    private static func findBackwards(_ line: UnsafeMutablePointer<UInt8>, _ length: Int) -> Int? {
        var index = length - 5
        while index >= 0 {
            if line[index] == UInt8(ascii: "{"), line[index + 1] == UInt8(ascii: "\""),
                line[index + 2] == UInt8(ascii: "s"), line[index + 3] == UInt8(ascii: "\""),
                line[index + 4] == UInt8(ascii: ":")
            {
                return index
            }
            index -= 1
        }
        return nil
    }

    @inline(__always)
    private static func number(_ line: UnsafeMutablePointer<UInt8>, from start: Int, _ length: Int) -> Int {
        var value = 0
        var index = start
        while index < length {
            let digit = Int(line[index]) &- 48
            guard digit >= 0, digit <= 9 else { break }
            value = value &* 10 &+ digit
            index += 1
        }
        return value
    }

    // MARK: - After the run

    /// Scene files whose last write never reached a subscriber, summed over subscribers.
    func lostFiles(finalSequences: [Int]) -> Int {
        var lost = 0
        for connection in connections {
            for (file, sequence) in finalSequences.enumerated()
            where file < connection.lastSequence.count && connection.lastSequence[file] != sequence {
                lost += 1
            }
        }
        return lost
    }
}
