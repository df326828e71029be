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
    let scene: String
    let dialect: Dialect
    let stamps: StampTable
    let base: UInt64
    private(set) var sent = 0
    private(set) var acknowledged = 0
    private(set) var errors = 0
    private(set) var firstSend: Int64 = 0
    private(set) var lastAcknowledgement: Int64 = 0
    /// The revision in the newest response: `base + sent` at the end when nobody else changed anything.
    private(set) var lastRevision: UInt64 = 0
    private(set) var cpuNanoseconds: Int64 = 0

    private var request: [UInt8] = []
    private var payload: [UInt8] = []
    private static let publish = Array("PUBLISH".utf8)
    private var responses = [UInt8](repeating: 0, count: 1 << 18)
    private var responseCarry = 0

    static let maxUnanswered = 1024

    init(
        socketPath: String, scene: String, stamps: StampTable, base: UInt64, dialect: Dialect = .scenesync
    ) throws(BenchError) {
        fd = try UnixSocket.connect(socketPath)
        UnixSocket.setNonBlocking(fd)
        self.scene = scene
        self.dialect = dialect
        self.stamps = stamps
        self.base = base
        request.reserveCapacity(64 * 256)
    }

    deinit { close(fd) }

    /// A realistic two-view codable path whose top view changes with every request (so every `set` is a change).
    static func path(_ n: Int) -> String {
        #"[{"type":"MyApp.Category","value":{"id":7,"name":"Desserts"}},"#
            + #"{"type":"MyApp.Recipe","value":{"id":\#(n),"title":"Apple pie"}}]"#
    }

    private func appendRequest(_ n: Int) {
        if dialect == .redis {
            payload.removeAll(keepingCapacity: true)
            payload.append(UInt8(ascii: "@"))
            Self.appendInt(n, to: &payload)
            payload.append(contentsOf: #" [{"type":"MyApp.Category","value":{"id":7,"name":"Desserts"}},"#.utf8)
            payload.append(contentsOf: #"{"type":"MyApp.Recipe","value":{"id":"#.utf8)
            Self.appendInt(n, to: &payload)
            payload.append(contentsOf: #","title":"Apple pie"}}]"#.utf8)
            RESP.append([Self.publish, Array(scene.utf8), payload], to: &request)
            return
        }
        request.append(contentsOf: #"{"id":"#.utf8)
        Self.appendInt(n, to: &request)
        request.append(contentsOf: #","op":"set","scene":""#.utf8)
        request.append(contentsOf: scene.utf8)
        request.append(contentsOf: #"","path":[{"type":"MyApp.Category","value":{"id":7,"name":"Desserts"}},"#.utf8)
        request.append(contentsOf: #"{"type":"MyApp.Recipe","value":{"id":"#.utf8)
        Self.appendInt(n, to: &request)
        request.append(contentsOf: #","title":"Apple pie"}}]}"#.utf8)
        request.append(0x0A)
    }

    /// Sends as fast as the daemon answers and the subscribers keep up, until `deadline` or the table is full.
    func runSaturated(until deadline: Int64, window: Int, pool: SubscriberPool) throws(BenchError) {
        let cpuStart = Monotonic.threadCPU()
        defer { cpuNanoseconds += Monotonic.threadCPU() - cpuStart }
        let batchLimit = 64
        firstSend = Monotonic.now()
        while Monotonic.now() < deadline, sent + batchLimit < stamps.capacity {
            try readResponses()
            let minimum = pool.minimumRevision
            let delivered = minimum == UInt64.max || minimum < base ? 0 : Int(minimum - base)
            let room = min(window - (sent - delivered), Self.maxUnanswered - (sent - acknowledged), batchLimit)
            guard room > 0 else {
                if sent - acknowledged >= Self.maxUnanswered {
                    var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                    _ = poll(&descriptor, 1, 1)
                } else {
                    usleep(50)
                }
                continue
            }
            request.removeAll(keepingCapacity: true)
            for k in 1...room { appendRequest(sent + k) }
            let now = Monotonic.now()
            for k in 1...room { stamps.set(sent + k, now) }
            try UnixSocket.sendAll(fd, request)
            sent += room
        }
    }

    /// One request every `1/rate` s on an absolute schedule, until `deadline`. `sample` runs about every 100 ms.
    func runPaced(rate: Int, until deadline: Int64, sample: () -> Void = {}) throws(BenchError) {
        let cpuStart = Monotonic.threadCPU()
        defer { cpuNanoseconds += Monotonic.threadCPU() - cpuStart }
        let interval = 1e9 / Double(max(1, rate))
        let start = Monotonic.now()
        firstSend = start
        var nextSample = start
        while sent + 1 < stamps.capacity {
            let due = start + Int64(Double(sent) * interval)
            guard due < deadline else { break }
            Monotonic.sleep(until: due)
            request.removeAll(keepingCapacity: true)
            appendRequest(sent + 1)
            stamps.set(sent + 1, Monotonic.now())
            try UnixSocket.sendAll(fd, request)
            sent += 1
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
        while acknowledged < sent {
            guard Monotonic.now() < deadline else {
                throw BenchError("only \(acknowledged) of \(sent) set requests answered within \(Int(timeout)) s")
            }
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            _ = poll(&descriptor, 1, 10)
            try readResponses()
        }
    }

    /// Counts the complete response lines waiting on the socket, without blocking.
    private func readResponses() throws(BenchError) {
        while true {
            let carry = responseCarry
            let count = responses.withUnsafeMutableBytes { raw in
                recv(fd, raw.baseAddress.map { $0 + carry }, raw.count - carry, Int32(MSG_DONTWAIT))
            }
            if count < 0 {
                if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { return }
                throw .system("recv", errno)
            }
            if count == 0 { throw BenchError("the daemon closed the writer's connection") }
            let now = Monotonic.now()
            let total = carry + count
            var lineStart = 0
            var lastLine: Range<Int>? = nil
            for index in carry..<total where responses[index] == 0x0A {
                // {"id":N,"ok":true,… — anything else is an error response (or an event, which we never ask for).
                // Redis answers a PUBLISH with :receivers.
                if dialect == .redis, responses[lineStart] == UInt8(ascii: ":") {
                    acknowledged += 1
                } else if let comma = responses[lineStart..<index].firstIndex(of: UInt8(ascii: ",")),
                    comma + 6 < index, responses[comma + 6] == UInt8(ascii: "t")
                {
                    acknowledged += 1
                } else {
                    errors += 1
                    acknowledged += 1
                    if errors == 1 {
                        printError(
                            "scenesync-bench: set failed: "
                                + String(decoding: responses[lineStart..<index].prefix(300), as: UTF8.self))
                    }
                }
                lastLine = lineStart..<index
                lineStart = index + 1
            }
            if let lastLine {
                lastAcknowledgement = now
                lastRevision =
                    dialect == .redis
                    ? base + UInt64(acknowledged) : Self.revision(in: responses[lastLine]) ?? lastRevision
            }
            responseCarry = total - lineStart
            if responseCarry > 0, lineStart > 0 {
                responses.withUnsafeMutableBytes { raw in
                    guard let base = raw.baseAddress else { return }
                    base.copyMemory(from: base + lineStart, byteCount: total - lineStart)
                }
            }
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
