import Foundation
import SceneSyncCore
import SceneSyncTestKit
import Testing

/// A scripted stand-in for `scenesyncd` on a temporary Unix socket: each accepted connection runs the next script on
/// its own thread, with blocking reads that time out rather than hang a test.
///
/// It lets the client's own logic (id matching, event routing, reconnection) be tested with exact control over what
/// the "daemon" sends and when, which the real daemon cannot offer (for example a refused connection, a restart in
/// the middle of a catch-up, or garbage on the socket).
final class FakeDaemon: @unchecked Sendable {
    let directory: String
    let path: String
    private let listener: Int32

    /// `backlog` is the listen queue's length: 0 lets a test fill it (``fillBacklog()``).
    init(backlog: Int32 = 8) throws {
        var template = Array((NSTemporaryDirectory() + "/ssc.XXXXXX").utf8CString)
        guard let created = mkdtemp(&template) else { throw FakeError.system("mkdtemp", errno) }
        directory = String(cString: created)
        path = directory + "/s.sock"
        listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard listener >= 0 else { throw FakeError.system("socket", errno) }
        let bound = UnixSocketAddress.with(path) { bind(listener, $0, $1) }
        guard bound == 0, listen(listener, backlog) == 0 else { throw FakeError.system("bind", errno) }
    }

    /// Connects non-blocking sockets that nobody accepts until the listen queue is full, so that the next
    /// non-blocking `connect(2)` fails with `EAGAIN`, as a daemon too busy to accept gets it; returns them, for
    /// the caller to close.
    func fillBacklog() throws -> [Int32] {
        var fillers: [Int32] = []
        while fillers.count < 1024 {
            let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            guard fd >= 0 else { throw FakeError.system("socket", errno) }
            let connected = UnixSocketAddress.with(path) { connect(fd, $0, $1) }
            if connected == 0 {
                fillers.append(fd)
                continue
            }
            let error = errno
            close(fd)
            guard error == EAGAIN else { throw FakeError.system("connect", error) }
            return fillers
        }
        throw FakeError.system("connect: the listen queue never filled", 0)
    }

    /// Accepts connections one after the other, running `scripts` in order; a script's error is recorded.
    func serve(_ scripts: [@Sendable (FakePeer) throws -> Void]) {
        let listener = self.listener
        let failures = self.failures
        Thread.detachNewThread {
            for script in scripts {
                let fd = accept(listener, nil, nil)
                guard fd >= 0 else { return }
                let peer = FakePeer(fd: fd)
                do {
                    try script(peer)
                } catch {
                    failures.append("\(error)")
                }
                peer.close()
            }
        }
    }

    let failures = FailureLog()

    /// Ends the fake and fails the calling test for every script that threw so far: a script is the test's own
    /// expectation of what the client sends, so its failure is the test's, whether or not the test asks.
    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        try? FileManager.default.removeItem(atPath: directory)  // a temp directory; leaving it harms nothing
        for failure in failures.all { Issue.record("a fake daemon script failed: \(failure)") }
    }

    enum FakeError: Error {
        case system(String, Int32)
        case timeout
        case closed
    }
}
