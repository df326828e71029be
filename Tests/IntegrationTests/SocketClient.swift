import Foundation
import SceneSyncCore
import SceneSyncTestKit

/// Lines read from a non-blocking descriptor (a socket, a pipe). A read that finds nothing waits for the descriptor
/// on a dedicated thread (``DescriptorWait``) until its deadline; nothing reads ahead on its own, so a reader that
/// stops asking really stops reading, as a stalled client does.
final class LineReader: @unchecked Sendable {
    let fd: Int32
    private var buffer: [UInt8] = []
    /// Where the unread part of `buffer` starts: lines are consumed by moving this, not by copying the rest.
    private var start = 0
    private(set) var reachedEOF = false

    init(fd: Int32) {
        self.fd = fd
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
    }

    enum ReadError: Error, CustomStringConvertible {
        case system(String, Int32)
        var description: String {
            switch self {
            case .system(let call, let code): "\(call): \(String(cString: strerror(code)))"
            }
        }
    }

    /// The next line without its `\n`; at EOF an unterminated last line is still a line, then `nil`. Throws
    /// ``WaitTimeout`` naming `what` when no line is complete by `deadline`.
    func readLine(until deadline: ContinuousClock.Instant, _ what: @autoclosure () -> String) async throws -> String? {
        while true {
            if let newline = buffer[start...].firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[start..<newline], as: UTF8.self)
                start = newline + 1
                if start == buffer.count {
                    buffer.removeAll(keepingCapacity: true)
                    start = 0
                }
                return line
            }
            if reachedEOF {
                guard start < buffer.count else { return nil }
                let line = String(decoding: buffer[start...], as: UTF8.self)
                buffer.removeAll()
                start = 0
                return line
            }
            try await fill(until: deadline, what())
        }
    }

    /// Reads what is there now; waits for the descriptor first when nothing is.
    private func fill(until deadline: ContinuousClock.Instant, _ what: @autoclosure () -> String) async throws {
        if start > 0 {
            buffer.removeFirst(start)
            start = 0
        }
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count > 0 {
                buffer.append(contentsOf: chunk[0..<count])
                return
            }
            if count == 0 {
                reachedEOF = true
                return
            }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK:
                switch try await DescriptorWait.wait(fd, for: Int16(POLLIN), until: deadline) {
                case .ready: continue
                case .timedOut: throw WaitTimeout(what: what())
                case .failed(let code): throw ReadError.system("poll", code)
                }
            case ECONNRESET:
                // The daemon closed with our requests unread: for a reader, that is the end of the stream.
                reachedEOF = true
                return
            case let code: throw ReadError.system("read", code)
            }
        }
    }
}

/// A Unix-socket client speaking the line protocol, for tests. Every read and write has a deadline that fails the
/// test with what it was waiting for, rather than hanging it, and none of them blocks the cooperative pool.
final class SocketClient: @unchecked Sendable {
    let fd: Int32
    private let reader: LineReader
    private var nextID = 1
    /// Events read while waiting for a response, in arrival order.
    private(set) var pendingEvents: [JSONValue] = []
    /// How long one read or one write may wait.
    var timeout: Duration = .seconds(15)
    /// Drops `heartbeat` events as they are read. A heartbeat comes every `socket.heartbeat_s` (30 s by default),
    /// and with the suite running in parallel on two cores a test can last that long: without this, one would land
    /// among the events a test counts. Tests about heartbeats turn it off.
    var skipsHeartbeats = true

    private init(fd: Int32) {
        self.fd = fd
        reader = LineReader(fd: fd)
    }

    /// Connects a blocking socket to `path` (the caller's thread waits, up to `timeout`): the descriptor, or -1
    /// and the error.
    static func openConnection(path: String, timeout: Duration) -> (fd: Int32, error: Int32) {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return (-1, errno) }
        var limit = timeval(
            tv_sec: Int(timeout.components.seconds),
            tv_usec: Int(timeout.components.attoseconds / 1_000_000_000_000))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        let connected = UnixSocketAddress.with(path) { Foundation.connect(fd, $0, $1) }
        guard connected == 0 else {
            let code = errno
            Foundation.close(fd)
            return (-1, code)
        }
        var none = timeval()
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &none, socklen_t(MemoryLayout<timeval>.size))
        return (fd, 0)
    }

    /// Connects to the daemon at `path`. `connect` on a Unix socket blocks while the listen backlog is full, so it
    /// runs on a dedicated thread, bounded by `timeout` through `SO_SNDTIMEO`.
    static func connect(path: String, timeout: Duration = .seconds(10)) async throws -> SocketClient {
        let result = await DedicatedThread.run("connect") { openConnection(path: path, timeout: timeout) }
        guard result.fd >= 0 else { throw ClientError.system("connect \(path)", result.error) }
        return SocketClient(fd: result.fd)
    }

    deinit { Foundation.close(fd) }

    func close() { shutdown(fd, Int32(SHUT_RDWR)) }

    /// Half-closes the sending side.
    func finishSending() { shutdown(fd, Int32(SHUT_WR)) }

    /// Sends every byte; waits (off the pool) while the socket buffer is full, at most `timeout` in all.
    func send(raw: String) async throws {
        try await send(bytes: Array(raw.utf8))
    }

    func send(bytes: [UInt8]) async throws {
        let deadline = ContinuousClock.now + timeout
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes {
                Foundation.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
            }
            if written > 0 {
                offset += written
                continue
            }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK:
                switch try await DescriptorWait.wait(fd, for: Int16(POLLOUT), until: deadline) {
                case .ready: continue
                case .timedOut:
                    throw ClientError.timeout("the daemon to accept \(bytes.count - offset) more bytes of a request")
                case .failed(let code): throw ClientError.system("poll", code)
                }
            case let code: throw ClientError.system("send", code)
            }
        }
    }

    /// Sends as much of `bytes` as the socket takes right now, without waiting; returns how much that was. For
    /// clients that pipeline more than the daemon reads.
    func sendWithoutWaiting(_ bytes: ArraySlice<UInt8>) throws -> Int {
        while true {
            let written = bytes.withUnsafeBytes {
                Foundation.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
            }
            if written >= 0 { return written }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return 0
            case let code: throw ClientError.system("send", code)
            }
        }
    }

    /// Sends a request built from `fields` (JSON fragments by key) with a fresh numeric id; returns the id.
    @discardableResult
    func send(_ op: String, _ fields: [String: String] = [:]) async throws -> Int {
        let id = nextID
        nextID += 1
        try await send(raw: Self.line(id: id, op, fields))
        return id
    }

    /// The request line `send(_:_:)` sends.
    static func line(id: Int, _ op: String, _ fields: [String: String] = [:]) -> String {
        var members = [#""id":\#(id)"#, #""op":"\#(op)""#]
        for (key, value) in fields.sorted(by: { $0.key < $1.key }) { members.append(#""\#(key)":\#(value)"#) }
        return "{" + members.joined(separator: ",") + "}\n"
    }

    /// Sends a request and returns its response, keeping any events that arrive first in `pendingEvents`.
    func request(_ op: String, _ fields: [String: String] = [:]) async throws -> JSONValue {
        let id = try await send(op, fields)
        return try await response(to: id, op)
    }

    func response(to id: Int, _ op: String = "request") async throws -> JSONValue {
        while true {
            let message = try await readMessage("the response to \(op) \(id)")
            if message["event"] != nil {
                if !(skipsHeartbeats && message["event"]?.stringValue == "heartbeat") { pendingEvents.append(message) }
                continue
            }
            guard message["id"]?.uint64Value == UInt64(id) else {
                throw ClientError.unexpected("response for another id: \(message)")
            }
            return message
        }
    }

    /// The next event (first from those buffered while waiting for responses).
    func nextEvent() async throws -> JSONValue {
        if !pendingEvents.isEmpty { return pendingEvents.removeFirst() }
        while true {
            let message = try await readMessage("an event")
            guard message["event"] != nil else { throw ClientError.unexpected("expected an event, got \(message)") }
            if skipsHeartbeats, message["event"]?.stringValue == "heartbeat" { continue }
            return message
        }
    }

    /// Takes the events buffered while waiting for responses. Everything the daemon queued for this connection
    /// before a response is read by the time that response is, so after `sync()` this is every event so far.
    func takeEvents() -> [JSONValue] {
        defer { pendingEvents.removeAll() }
        return pendingEvents
    }

    /// Events until (and including) the first one named `name`.
    func events(until name: String) async throws -> [JSONValue] {
        var events: [JSONValue] = []
        while true {
            let event = try await nextEvent()
            events.append(event)
            if event["event"]?.stringValue == name { return events }
        }
    }

    /// Reads one line and parses it.
    func readMessage(_ what: @autoclosure () -> String = "a message") async throws -> JSONValue {
        let line = try await readLine(what())
        do {
            return try JSONParser.parse(Array(line.utf8))
        } catch {
            throw ClientError.unexpected("not JSON: \(line)")
        }
    }

    /// Reads one line; `ClientError.closed` at EOF, `ClientError.timeout` when none arrives within `timeout`.
    func readLine(_ what: @autoclosure () -> String = "a line") async throws -> String {
        let deadline = ContinuousClock.now + timeout
        do {
            guard let line = try await reader.readLine(until: deadline, "") else { throw ClientError.closed }
            return line
        } catch is WaitTimeout {
            throw ClientError.timeout("\(what()) from the daemon within \(timeout)")
        } catch let error as LineReader.ReadError {
            throw ClientError.unexpected("\(error)")
        }
    }

    /// Whether no line arrives within `period`: for an answer the daemon must hold back, checked once the daemon
    /// has reported the state in which it must (a line that does arrive is dropped).
    func receivesNothing(within period: Duration) async throws -> Bool {
        do {
            _ = try await reader.readLine(until: ContinuousClock.now + period, "a line")
            return false
        } catch is WaitTimeout {
            return true
        }
    }

    /// True when the daemon closed the connection (EOF) within the timeout; the lines before it are dropped.
    func isClosedByPeer() async -> Bool {
        do {
            while true { _ = try await readLine("the daemon to close the connection") }
        } catch ClientError.closed {
            return true
        } catch {
            return false
        }
    }

    enum ClientError: Error, Equatable, CustomStringConvertible {
        case system(String, Int32)
        case timeout(String)
        case closed
        case unexpected(String)

        var description: String {
            switch self {
            case .system(let call, let code): "\(call): \(String(cString: strerror(code)))"
            case .timeout(let what): "timed out waiting for \(what)"
            case .closed: "the daemon closed the connection"
            case .unexpected(let what): what
            }
        }
    }
}

extension JSONValue {
    /// The `error.code` of a failed response.
    var errorCode: String? { self["error"]?["code"]?.stringValue }
    var isOK: Bool { self["ok"]?.boolValue == true }
}

/// JSON text helpers for building requests.
enum J {
    static func string(_ text: String) -> String {
        var out: [UInt8] = []
        JSONWriter.appendString(text, to: &out)
        return String(decoding: out, as: UTF8.self)
    }
}
