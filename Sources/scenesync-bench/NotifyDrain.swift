import SceneSyncThreads
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Reads the daemon's `sd_notify` datagrams after `READY=1`, as systemd does.
///
/// The daemon sends `STATUS=` as its state changes; a datagram socket nobody reads fills up after a few hundred
/// messages and then blocks the sender, so the bench must keep reading for as long as the daemon runs. The count
/// shows what the status line costs per change.
final class NotifyDrain: @unchecked Sendable {
    private let fd: Int32
    private let stopping = Atomic<Bool>(false)
    private let received = Atomic<Int>(0)
    private var thread: PosixThread? = nil

    init(fd: Int32) {
        self.fd = fd
    }

    var datagrams: Int { received.load(ordering: .relaxed) }

    func start() {
        thread = PosixThread.startOrExit { self.run() }
    }

    func stop() {
        stopping.store(true, ordering: .releasing)
        thread?.join()
        thread = nil
    }

    private func run() {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !stopping.load(ordering: .acquiring) {
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, 50) > 0 else { continue }
            while buffer.withUnsafeMutableBytes({ recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }) > 0 {
                received.add(1, ordering: .relaxed)
            }
        }
    }
}
