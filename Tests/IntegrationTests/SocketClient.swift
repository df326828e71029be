import Foundation
import SceneSyncCore

/// A plain blocking Unix-socket client speaking the line protocol, for tests. Every read has a timeout that fails
/// the test rather than hanging it.
final class SocketClient: @unchecked Sendable {
    let fd: Int32
    private var buffer: [UInt8] = []
    private var nextID = 1
    /// Events read while waiting for a response, in arrival order.
    private(set) var pendingEvents: [JSONValue] = []
    var timeout: Duration = .seconds(15)

    init(path: String, timeout: Duration = .seconds(10)) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw ClientError.system("socket", errno) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in Array(path.utf8).prefix(raw.count - 1).enumerated() { raw[index] = byte }
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Foundation.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard result == 0 else {
            let code = errno
            Foundation.close(fd)
            throw ClientError.system("connect \(path)", code)
        }
    }

    deinit { Foundation.close(fd) }

    func close() { shutdown(fd, Int32(SHUT_RDWR)) }

    /// Half-closes the sending side.
    func finishSending() { shutdown(fd, Int32(SHUT_WR)) }

    func send(raw: String) throws {
        let bytes = Array(raw.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes {
                Foundation.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            guard written > 0 else { throw ClientError.system("send", errno) }
            offset += written
        }
    }

    /// Sends a request built from `fields` (JSON fragments by key) with a fresh numeric id; returns the id.
    @discardableResult
    func send(_ op: String, _ fields: [String: String] = [:]) throws -> Int {
        let id = nextID
        nextID += 1
        var members = [#""id":\#(id)"#, #""op":"\#(op)""#]
        for (key, value) in fields.sorted(by: { $0.key < $1.key }) { members.append(#""\#(key)":\#(value)"#) }
        try send(raw: "{" + members.joined(separator: ",") + "}\n")
        return id
    }

    /// Sends a request and returns its response, keeping any events that arrive first in `pendingEvents`.
    func request(_ op: String, _ fields: [String: String] = [:]) throws -> JSONValue {
        let id = try send(op, fields)
        return try response(to: id)
    }

    func response(to id: Int) throws -> JSONValue {
        while true {
            let message = try readMessage()
            if message["event"] != nil {
                pendingEvents.append(message)
                continue
            }
            guard message["id"]?.uint64Value == UInt64(id) else {
                throw ClientError.unexpected("response for another id: \(message)")
            }
            return message
        }
    }

    /// The next event (first from those buffered while waiting for responses).
    func nextEvent() throws -> JSONValue {
        if !pendingEvents.isEmpty { return pendingEvents.removeFirst() }
        let message = try readMessage()
        guard message["event"] != nil else { throw ClientError.unexpected("expected an event, got \(message)") }
        return message
    }

    /// Takes the events buffered while waiting for responses. Everything the daemon queued for this connection
    /// before a response is read by the time that response is, so after `sync()` this is every event so far.
    func takeEvents() -> [JSONValue] {
        defer { pendingEvents.removeAll() }
        return pendingEvents
    }

    /// Events until (and including) the first one named `name`.
    func events(until name: String) throws -> [JSONValue] {
        var events: [JSONValue] = []
        while true {
            let event = try nextEvent()
            events.append(event)
            if event["event"]?.stringValue == name { return events }
        }
    }

    /// Reads one line and parses it.
    func readMessage() throws -> JSONValue {
        let line = try readLine()
        do {
            return try JSONParser.parse(Array(line.utf8))
        } catch {
            throw ClientError.unexpected("not JSON: \(line)")
        }
    }

    /// Reads one line; `ClientError.closed` at EOF.
    func readLine() throws -> String {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = Array(buffer[..<newline])
                buffer.removeFirst(newline + 1)
                return String(decoding: line, as: UTF8.self)
            }
            let remaining = deadline - ContinuousClock.now
            guard remaining > .zero else { throw ClientError.timeout }
            var pollfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let milliseconds = Int32(min(remaining.components.seconds * 1000 + 1, 60_000))
            let ready = poll(&pollfd, 1, milliseconds)
            if ready == 0 { continue }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count < 0 {
                if errno == EINTR { continue }
                throw ClientError.system("recv", errno)
            }
            if count == 0 {
                if !buffer.isEmpty {
                    let line = String(decoding: buffer, as: UTF8.self)
                    buffer.removeAll()
                    return line
                }
                throw ClientError.closed
            }
            buffer.append(contentsOf: chunk[0..<count])
        }
    }

    /// True when the daemon closed the connection (EOF) within the timeout.
    func isClosedByPeer() -> Bool {
        do {
            while true { _ = try readLine() }
        } catch ClientError.closed {
            return true
        } catch {
            return false
        }
    }

    enum ClientError: Error, Equatable {
        case system(String, Int32)
        case timeout
        case closed
        case unexpected(String)
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
