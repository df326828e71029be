import Foundation
import SceneSyncTestKit

/// A fake `NOTIFY_SOCKET`: a datagram socket that records what the daemon tells systemd.
///
/// A dedicated thread reads every datagram as soon as it arrives, the way systemd does: the daemon sends `STATUS=`
/// after changes, and a Unix datagram socket whose queue is full (`net.unix.max_dgram_qlen`, 10 by default) blocks
/// the sender. The thread publishes each datagram in an ``AsyncVariable``, which tests await; the thread sits in
/// `poll` on the socket and on a wake-up socket that ``stop()`` (or dropping the listener) writes to.
final class NotifyListener: @unchecked Sendable {
    let path: String

    private let inbox = AsyncVariable<[String]>([])
    /// How many of `messages` `receive` has handed out.
    private var consumed = 0
    private let wakeWrite: Int32

    init(path: String) throws {
        self.path = path
        unlink(path)
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EIO) }
        let result = UnixSocketAddress.with(path) { bind(fd, $0, $1) }
        guard result == 0 else {
            close(fd)
            throw POSIXError(.EADDRINUSE)
        }
        var wake: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &wake) == 0 else {
            close(fd)
            throw POSIXError(.EMFILE)
        }
        wakeWrite = wake[1]
        let wakeRead = wake[0]
        var bound = stat()
        stat(path, &bound)
        let inode = bound.st_ino
        let inbox = inbox
        let thread = Thread {
            defer {
                close(fd)
                close(wakeRead)
                // A restarted daemon's listener may have bound the same path since: leave its socket alone.
                var current = stat()
                if stat(path, &current) == 0, current.st_ino == inode { unlink(path) }
            }
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                var descriptors = [
                    pollfd(fd: fd, events: Int16(POLLIN), revents: 0),
                    pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0),
                ]
                guard poll(&descriptors, 2, -1) > 0 else { continue }
                if descriptors[1].revents != 0 { return }
                let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
                guard count > 0 else { continue }
                let message = String(decoding: buffer[0..<count], as: UTF8.self)
                inbox.update { $0.append(message) }
            }
        }
        thread.name = "notify \(path)"
        thread.stackSize = 256 * 1024
        thread.start()
    }

    deinit {
        // The reader sees the hang-up and ends.
        close(wakeWrite)
    }

    /// Stops the reader thread (and removes the socket file, unless a newer listener owns the path).
    func stop() {
        var byte: UInt8 = 1
        _ = send(wakeWrite, &byte, 1, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
    }

    /// Every datagram received so far.
    var messages: [String] { inbox.value }

    /// The next datagram not yet returned by this method, or nil after `timeout`.
    func receive(timeout: Duration) async throws -> String? {
        let index = consumed
        do {
            let message = try await inbox.wait(for: "a notify message", until: .now + timeout) {
                $0.count > index ? $0[index] : nil
            }
            consumed = index + 1
            return message
        } catch is WaitTimeout {
            return nil
        }
    }

    /// Waits for the next datagram containing `text`, skipping the others; nil after `timeout`.
    func waitFor(_ text: String, timeout: Duration = .seconds(15)) async throws -> String? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let message = try await receive(timeout: deadline - ContinuousClock.now), message.contains(text) {
                return message
            }
        }
        return nil
    }
}
