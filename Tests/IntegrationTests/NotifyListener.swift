import Foundation

/// A fake `NOTIFY_SOCKET`: a datagram socket that records what the daemon tells systemd.
///
/// A thread reads every datagram as soon as it arrives, the way systemd does. The daemon sends `STATUS=` after
/// changes, and a Unix datagram socket whose queue is full (`net.unix.max_dgram_qlen`, 10 by default) blocks the
/// sender: a listener that stopped reading after `READY=1` would stall a test daemon after a handful of requests.
final class NotifyListener: @unchecked Sendable {
    let path: String

    /// What the reader thread shares with the listener. The thread holds this, not the listener, so that dropping
    /// the listener stops the thread.
    private final class Inbox: @unchecked Sendable {
        let condition = NSCondition()
        var messages: [String] = []
        var stopped = false
    }

    private let inbox = Inbox()
    /// How many of `messages` `receive` has handed out.
    private var consumed = 0

    init(path: String) throws {
        self.path = path
        unlink(path)
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
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
        guard result == 0 else {
            close(fd)
            throw POSIXError(.EADDRINUSE)
        }
        var bound = stat()
        stat(path, &bound)
        let inode = bound.st_ino
        let inbox = inbox
        Thread.detachNewThread {
            defer {
                close(fd)
                // A restarted daemon's listener may have bound the same path since: leave its socket alone.
                var current = stat()
                if stat(path, &current) == 0, current.st_ino == inode { unlink(path) }
            }
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                inbox.condition.lock()
                let stopped = inbox.stopped
                inbox.condition.unlock()
                if stopped { return }
                // Wakes up now and then only to notice that the listener is gone.
                var pollfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                guard poll(&pollfd, 1, 100) > 0 else { continue }
                let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                guard count > 0 else { continue }
                inbox.condition.lock()
                inbox.messages.append(String(decoding: buffer[0..<count], as: UTF8.self))
                inbox.condition.broadcast()
                inbox.condition.unlock()
            }
        }
    }

    deinit {
        inbox.condition.lock()
        inbox.stopped = true
        inbox.condition.unlock()
    }

    /// Every datagram received so far.
    var messages: [String] {
        inbox.condition.lock()
        defer { inbox.condition.unlock() }
        return inbox.messages
    }

    /// The next datagram not yet returned by this method, or nil after `timeout`.
    func receive(timeout: Duration) -> String? {
        let deadline = Date().addingTimeInterval(
            Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18)
        inbox.condition.lock()
        defer { inbox.condition.unlock() }
        while inbox.messages.count <= consumed {
            guard inbox.condition.wait(until: deadline) else { return nil }
        }
        consumed += 1
        return inbox.messages[consumed - 1]
    }

    /// Waits for the next datagram containing `text`, skipping the others.
    func waitFor(_ text: String, timeout: Duration = .seconds(15)) -> String? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let message = receive(timeout: deadline - ContinuousClock.now), message.contains(text) {
                return message
            }
        }
        return nil
    }
}
