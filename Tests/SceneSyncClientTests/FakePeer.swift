import Foundation
import SceneSyncCore

/// One accepted connection of the fake daemon.
///
/// Timeouts are long on purpose: they only keep a broken test from hanging for ever. Under the full suite, the
/// synchronous integration tests can keep the cooperative threads busy for many seconds at a time.
final class FakePeer: @unchecked Sendable {
    let fd: Int32
    private var buffer: [UInt8] = []

    init(fd: Int32) {
        self.fd = fd
    }

    /// The next request line, parsed.
    func readRequest(timeout: Duration = .seconds(120)) throws -> JSONValue {
        try JSONParser.parse(Array(try readLine(timeout: timeout).utf8))
    }

    func readLine(timeout: Duration = .seconds(120)) throws -> String {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = Array(buffer[..<newline])
                buffer.removeFirst(newline + 1)
                return String(decoding: line, as: UTF8.self)
            }
            guard ContinuousClock.now < deadline else { throw FakeDaemon.FakeError.timeout }
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            if poll(&descriptor, 1, 100) <= 0 { continue }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { throw FakeDaemon.FakeError.closed }
            buffer.append(contentsOf: chunk[0..<count])
        }
    }

    /// Sends raw text as is (include the newlines).
    func send(_ text: String) {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes {
                Foundation.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            guard written > 0 else { return }
            offset += written
        }
    }

    /// Waits until the client closes its side.
    func waitForClose(timeout: Duration = .seconds(120)) {
        do {
            while true { _ = try readLine(timeout: timeout) }
        } catch {}
    }

    func close() {
        Foundation.close(fd)
    }
}

extension JSONValue {
    /// The request's id, as the fake echoes it.
    var requestID: String { String(decoding: (self["id"] ?? .null).serialized(), as: UTF8.self) }
}
