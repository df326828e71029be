import Foundation

/// A fake `NOTIFY_SOCKET`: a datagram socket that records what the daemon tells systemd.
final class NotifyListener: @unchecked Sendable {
    let path: String
    let fd: Int32
    private(set) var messages: [String] = []

    init(path: String) throws {
        self.path = path
        unlink(path)
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EIO) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in Array(path.utf8).prefix(raw.count - 1).enumerated() { raw[index] = byte }
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard result == 0 else { throw POSIXError(.EADDRINUSE) }
    }

    deinit {
        close(fd)
        unlink(path)
    }

    /// The next datagram, or nil after `timeout`.
    func receive(timeout: Duration) -> String? {
        var pollfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let milliseconds = Int32(
            timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
        guard poll(&pollfd, 1, max(1, milliseconds)) > 0 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return nil }
        let message = String(decoding: buffer[0..<count], as: UTF8.self)
        messages.append(message)
        return message
    }

    /// Waits for a datagram containing `text`; returns every datagram seen up to it.
    func waitFor(_ text: String, timeout: Duration = .seconds(15)) -> String? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let message = receive(timeout: .milliseconds(200)), message.contains(text) { return message }
        }
        return nil
    }
}
