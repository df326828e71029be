import SceneSyncCore

#if canImport(Glibc)
import Glibc
#endif

/// A blocking request/response connection for the scenario's own bookkeeping (`hello`, `sync`, `list`, `get`,
/// `snapshot`, `stats`): events on it are skipped, every read has a timeout.
final class ControlClient {
    let fd: Int32
    private var buffer: [UInt8] = []
    private var start = 0
    private var nextID = 1
    var timeout: Double = 60

    init(path: String) throws(BenchError) {
        fd = try UnixSocket.connect(path)
    }

    deinit { close(fd) }

    /// Sends `{"id":N,"op":op<fields>}` (`fields` are JSON members with a leading comma) and returns the response
    /// line.
    func requestLine(_ op: String, _ fields: String = "") throws(BenchError) -> ArraySlice<UInt8> {
        let id = nextID
        nextID += 1
        try UnixSocket.sendAll(fd, Array(#"{"id":\#(id),"op":"\#(op)"\#(fields)}"#.utf8) + [0x0A])
        while true {
            let line = try readLine()
            if line.starts(with: Self.eventPrefix) { continue }
            return line
        }
    }

    /// The parsed response; throws when it is an error response.
    func request(_ op: String, _ fields: String = "") throws(BenchError) -> JSONValue {
        let line = try requestLine(op, fields)
        let json: JSONValue
        do {
            json = try JSONParser.parse(Array(line))
        } catch {
            throw BenchError("\(op): the response is not JSON")
        }
        guard json["ok"]?.boolValue == true else {
            throw BenchError("\(op) failed: \(String(decoding: line.prefix(300), as: UTF8.self))")
        }
        return json
    }

    /// The next line (an event or a response), without its newline.
    func readLine() throws(BenchError) -> ArraySlice<UInt8> {
        let deadline = Monotonic.now() + Int64(timeout * 1e9)
        var searched = start
        while true {
            if let newline = buffer[searched...].firstIndex(of: 0x0A) {
                let line = buffer[start..<newline]
                start = newline + 1
                return line
            }
            if start > 0, start == buffer.count {
                buffer.removeAll(keepingCapacity: true)
                start = 0
            } else if start > 1 << 20 {
                buffer.removeFirst(start)
                start = 0
            }
            searched = buffer.count
            let remaining = deadline - Monotonic.now()
            guard remaining > 0 else { throw BenchError("no answer from the daemon within \(Int(timeout)) s") }
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            if poll(&descriptor, 1, Int32(min(remaining / 1_000_000 + 1, 1000))) <= 0 { continue }
            let old = buffer.count
            buffer.append(contentsOf: repeatElement(0, count: 1 << 16))
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress.map { $0 + old }, 1 << 16, 0) }
            buffer.removeLast((1 << 16) - max(0, count))
            if count < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                throw .system("recv", errno)
            }
            if count == 0 { throw BenchError("the daemon closed the connection") }
        }
    }

    static let eventPrefix = Array(#"{"event":"#.utf8)
}
