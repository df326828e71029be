#if canImport(Glibc)
import Glibc
#endif

/// One client that changes a scene with pipelined `set` requests, stamping each request's send time under its
/// index (the n-th `set` is revision `base + n`), the way an app's own window pushes views.
///
/// Saturated, it keeps up to `maxUnanswered` requests in flight and stays at most `window` changes ahead of the
/// slowest subscriber: the daemon answers a `set` long before every subscriber has it, and without that bound the
/// measurement would be of queues growing until the subscriber limit drops them, not of sustained delivery.
final class ChangeDriver {
    /// What the writer sends: scenesync `set`s on a scene, or Redis `PUBLISH`es on a channel whose payload is the
    /// same path behind `@N ` (N the sequence the subscribers key on).
    enum Dialect {
        case scenesync
        case redis
    }

    let fd: Int32
    let stamps: StampTable
    let base: UInt64
    private(set) var progress = Progress()
    private var requests: Requests
    private var responses = Responses()

    private var dialect: Dialect { requests.dialect }

    static let maxUnanswered = 1024

    init(
        socketPath: String, scene: String, stamps: StampTable, base: UInt64, dialect: Dialect = .scenesync
    ) throws(BenchError) {
        fd = try UnixSocket.connect(socketPath)
        UnixSocket.setNonBlocking(fd)
        self.stamps = stamps
        self.base = base
        requests = Requests(scene: scene, dialect: dialect)
    }

    deinit { close(fd) }

    /// A realistic two-view codable path whose top view changes with every request (so every `set` is a change).
    static func path(_ n: Int) -> String {
        #"[{"type":"MyApp.Category","value":{"id":7,"name":"Desserts"}},"#
            + #"{"type":"MyApp.Recipe","value":{"id":\#(n),"title":"Apple pie"}}]"#
    }

    /// Sends as fast as the daemon answers and the subscribers keep up, until `deadline` or the table is full.
    func runSaturated(until deadline: Int64, window: Int, pool: SubscriberPool) throws(BenchError) {
        let cpuStart = Monotonic.threadCPU()
        defer { progress.cpuNanoseconds += Monotonic.threadCPU() - cpuStart }
        let batchLimit = 64
        progress.firstSend = Monotonic.now()
        while Monotonic.now() < deadline, progress.sent + batchLimit < stamps.capacity {
            try readResponses()
            let minimum = pool.minimumRevision
            let delivered = minimum == UInt64.max || minimum < base ? 0 : Int(minimum - base)
            let room = min(
                window - (progress.sent - delivered), Self.maxUnanswered - (progress.sent - progress.acknowledged),
                batchLimit)
            guard room > 0 else {
                if progress.sent - progress.acknowledged >= Self.maxUnanswered {
                    var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                    _ = poll(&descriptor, 1, 1)
                } else {
                    usleep(50)
                }
                continue
            }
            requests.removeAll()
            for k in 1...room { requests.append(progress.sent + k) }
            let now = Monotonic.now()
            for k in 1...room { stamps.set(progress.sent + k, now) }
            try UnixSocket.sendAll(fd, requests.bytes)
            progress.sent += room
        }
    }

    /// One request every `1/rate` s on an absolute schedule, until `deadline`. `sample` runs about every 100 ms.
    func runPaced(rate: Int, until deadline: Int64, sample: () -> Void = {}) throws(BenchError) {
        let cpuStart = Monotonic.threadCPU()
        defer { progress.cpuNanoseconds += Monotonic.threadCPU() - cpuStart }
        let interval = 1e9 / Double(max(1, rate))
        let start = Monotonic.now()
        progress.firstSend = start
        var nextSample = start
        while progress.sent + 1 < stamps.capacity {
            let due = start + Int64(Double(progress.sent) * interval)
            guard due < deadline else { break }
            Monotonic.sleep(until: due)
            requests.removeAll()
            requests.append(progress.sent + 1)
            stamps.set(progress.sent + 1, Monotonic.now())
            try UnixSocket.sendAll(fd, requests.bytes)
            progress.sent += 1
            try readResponses()
            if Monotonic.now() >= nextSample {
                sample()
                nextSample += 100_000_000
            }
        }
    }

    /// Waits for the answers to every request sent.
    func finish(timeout: Double = 60) throws(BenchError) {
        let deadline = Monotonic.now() + Int64(timeout * 1e9)
        while progress.acknowledged < progress.sent {
            guard Monotonic.now() < deadline else {
                throw BenchError(
                    "only \(progress.acknowledged) of \(progress.sent) set requests answered within \(Int(timeout)) s")
            }
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            _ = poll(&descriptor, 1, 10)
            try readResponses()
        }
    }

    /// Counts the complete response lines waiting on the socket, without blocking.
    private func readResponses() throws(BenchError) {
        while true {
            let carry = responses.carry
            guard let count = try responses.receive(from: fd) else { return }
            let now = Monotonic.now()
            let total = carry + count
            var lineStart = 0
            var lastLine: Range<Int>? = nil
            for index in carry..<total where responses.bytes[index] == 0x0A {
                // {"id":N,"ok":true,… — anything else is an error response (or an event, which we never ask for).
                // Redis answers a PUBLISH with :receivers.
                if dialect == .redis, responses.bytes[lineStart] == UInt8(ascii: ":") {
                    progress.acknowledged += 1
                } else if let comma = responses.bytes[lineStart..<index].firstIndex(of: UInt8(ascii: ",")),
                    comma + 6 < index, responses.bytes[comma + 6] == UInt8(ascii: "t")
                {
                    progress.acknowledged += 1
                } else {
                    progress.errors += 1
                    progress.acknowledged += 1
                    if progress.errors == 1 {
                        printError(
                            "scenesync-bench: set failed: "
                                + String(decoding: responses.bytes[lineStart..<index].prefix(300), as: UTF8.self))
                    }
                }
                lastLine = lineStart..<index
                lineStart = index + 1
            }
            if let lastLine {
                progress.lastAcknowledgement = now
                progress.lastRevision =
                    dialect == .redis
                    ? base + UInt64(progress.acknowledged)
                    : Self.revision(in: responses.bytes[lastLine]) ?? progress.lastRevision
            }
            responses.keep(from: lineStart, of: total)
        }
    }

    /// The number after `"revision":` in a response line.
    static func revision(in line: ArraySlice<UInt8>) -> UInt64? {
        let key = Array(#""revision":"#.utf8)
        guard line.count > key.count else { return nil }
        var index = line.endIndex - key.count
        while index >= line.startIndex {
            if line[index..<(index + key.count)].elementsEqual(key) {
                var value: UInt64 = 0
                var digit = index + key.count
                while digit < line.endIndex, line[digit] >= 48, line[digit] <= 57 {
                    value = value * 10 + UInt64(line[digit] - 48)
                    digit += 1
                }
                return value
            }
            index -= 1
        }
        return nil
    }

    static func appendInt(_ value: Int, to out: inout [UInt8]) {
        if value >= 10 { appendInt(value / 10, to: &out) }
        out.append(UInt8(48 + value % 10))
    }
}
