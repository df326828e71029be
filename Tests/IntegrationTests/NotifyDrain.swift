import Foundation

/// Keeps reading a daemon's fake `NOTIFY_SOCKET` after `READY=1`, the way systemd does.
///
/// The daemon sends a `STATUS=` datagram after changes, and a Unix datagram socket whose queue is full
/// (`net.unix.max_dgram_qlen`, 10 by default) blocks the sender: without a reader, a test daemon stops answering
/// after a handful of requests. `DaemonProcess` stops reading once it has seen `READY=1`, so tests that make many
/// changes drain the rest here.
final class NotifyDrain: @unchecked Sendable {
    private let lock = NSLock()
    private var stopped = false

    init(_ listener: NotifyListener?) {
        guard let listener else { return }
        Thread.detachNewThread { [self] in
            while !isStopped { _ = listener.receive(timeout: .milliseconds(100)) }
        }
    }

    private var isStopped: Bool {
        lock.lock()
        defer { lock.unlock() }
        return stopped
    }

    func stop() {
        lock.lock()
        stopped = true
        lock.unlock()
    }
}
