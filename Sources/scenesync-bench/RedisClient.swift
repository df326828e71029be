/// A blocking Redis connection for the scenario's bookkeeping (bulk `SET`s, `SAVE`, `DBSIZE`), on the same raw
/// socket and line reader as the daemon's `ControlClient`.
final class RedisClient {
    private let connection: ControlClient

    init(path: String) throws(BenchError) {
        connection = try ControlClient(path: path)
        connection.timeout = 300
    }

    var fd: Int32 { connection.fd }

    /// One command and its reply: a simple string, an integer or a bulk string's bytes; an error reply throws.
    func command(_ arguments: [String]) throws(BenchError) -> [UInt8] {
        try UnixSocket.sendAll(connection.fd, RESP.command(arguments))
        return try reply()
    }

    /// Sends pipelined commands (already encoded) and reads `count` one-line replies, all of which must succeed.
    func pipeline(_ encoded: [UInt8], count: Int) throws(BenchError) {
        try UnixSocket.sendAll(connection.fd, encoded)
        for _ in 0..<count {
            let line = try connection.readLine()
            if line.first == UInt8(ascii: "-") {
                throw BenchError("redis: \(String(decoding: line.prefix(300), as: UTF8.self))")
            }
        }
    }

    private func reply() throws(BenchError) -> [UInt8] {
        let line = Array(try connection.readLine().dropLast())  // the \r
        guard let kind = line.first else { throw BenchError("redis: empty reply") }
        switch kind {
        case UInt8(ascii: "-"):
            throw BenchError("redis: \(String(decoding: line, as: UTF8.self))")
        case UInt8(ascii: "$"):
            guard let length = Int(String(decoding: line.dropFirst(), as: UTF8.self)), length >= 0 else { return [] }
            var body: [UInt8] = []
            while body.count < length + 2 {
                body.append(contentsOf: try connection.readLine())
                body.append(0x0A)
            }
            return Array(body.prefix(length))
        default:
            return Array(line.dropFirst())
        }
    }
}
