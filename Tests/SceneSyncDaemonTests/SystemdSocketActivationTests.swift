import Glibc
import Testing

@testable import SceneSyncDaemon

/// The choice and the checks of `SocketActivation.controlSocket(environment:)`, on descriptors this test creates: the
/// real `LISTEN_FDS` path needs descriptors 3 and up, which belong to the test runner.
@Suite struct SystemdSocketActivationTests {
    typealias Inherited = SocketActivation.InheritedSocket

    @Test func nothingPassed() throws {
        #expect(try SocketActivation.select(from: []) == nil)
    }

    @Test func theNamedControlSocketAmongOthers() throws {
        let sockets = [
            Inherited(fileDescriptor: 3, name: "metrics"),
            Inherited(fileDescriptor: 4, name: "control"),
        ]
        #expect(try SocketActivation.select(from: sockets)?.fileDescriptor == 4)
    }

    @Test func namesWithoutControlAreAnError() {
        let sockets = [Inherited(fileDescriptor: 3, name: "scenesyncd.socket")]
        #expect(throws: SocketActivationError.noControlSocket(names: ["scenesyncd.socket"])) {
            try SocketActivation.select(from: sockets)
        }
        #expect(SocketActivationError.noControlSocket(names: ["x"]).description.contains("FileDescriptorName=control"))
    }

    @Test func theOnlyUnnamedSocket() throws {
        #expect(try SocketActivation.select(from: [Inherited(fileDescriptor: 3, name: nil)])?.fileDescriptor == 3)
    }

    @Test func severalUnnamedSocketsAreAmbiguous() {
        let sockets = [Inherited(fileDescriptor: 3, name: nil), Inherited(fileDescriptor: 4, name: nil)]
        #expect(throws: SocketActivationError.ambiguous(count: 2)) { try SocketActivation.select(from: sockets) }
    }

    @Test func aListeningUnixStreamSocketIsAcceptedAndMadeCloseOnExec() throws {
        let socket = try TestSocket(type: SOCK_STREAM, listening: true)
        #expect(fcntl(socket.fd, F_GETFD) & FD_CLOEXEC == 0)
        try SocketActivation.validate(socket.fd)
        #expect(fcntl(socket.fd, F_GETFD) & FD_CLOEXEC != 0)
    }

    /// What `sd_listen_fds` does to every passed descriptor, done here on one this test owns.
    @Test func passedDescriptorsAreMadeCloseOnExec() throws {
        let socket = try TestSocket(type: SOCK_STREAM, listening: true)
        #expect(fcntl(socket.fd, F_GETFD) & FD_CLOEXEC == 0)
        try SocketActivation.makeCloseOnExec(socket.fd)
        #expect(fcntl(socket.fd, F_GETFD) & FD_CLOEXEC != 0)
        try SocketActivation.makeCloseOnExec(socket.fd)
        #expect(fcntl(socket.fd, F_GETFD) & FD_CLOEXEC != 0)
        // Far above any descriptor limit, so no concurrently running test can have opened it.
        #expect(throws: SocketActivationError.invalidEnvironment(errno: EBADF)) {
            try SocketActivation.makeCloseOnExec(999_999)
        }
    }

    @Test func otherDescriptorsAreRejected() throws {
        let notListening = try TestSocket(type: SOCK_STREAM, listening: false)
        #expect(throws: SocketActivationError.notAListeningUnixStreamSocket(fileDescriptor: notListening.fd)) {
            try SocketActivation.validate(notListening.fd)
        }
        let datagram = try TestSocket(type: SOCK_DGRAM, listening: false)
        #expect(throws: SocketActivationError.notAListeningUnixStreamSocket(fileDescriptor: datagram.fd)) {
            try SocketActivation.validate(datagram.fd)
        }
        var pipeEnds: [Int32] = [-1, -1]
        #expect(pipe(&pipeEnds) == 0)
        defer { pipeEnds.forEach { close($0) } }
        #expect(throws: SocketActivationError.notAListeningUnixStreamSocket(fileDescriptor: pipeEnds[0])) {
            try SocketActivation.validate(pipeEnds[0])
        }
    }

    @Test func aDescriptorThatIsNotOpenIsUnusable() {
        // Far above any descriptor limit, so no concurrently running test can have opened it.
        let notOpen: Int32 = 999_999
        #expect(throws: SocketActivationError.unusable(fileDescriptor: notOpen, errno: EBADF)) {
            try SocketActivation.validate(notOpen)
        }
    }
}

/// A Unix socket bound to a fresh path (without close-on-exec, like an inherited one), removed again on deinit.
private final class TestSocket {
    let fd: Int32
    private let directory: String

    init(type: __socket_type, listening: Bool) throws {
        var template = Array("/tmp/ssa.XXXXXX".utf8CString)
        guard let created = mkdtemp(&template) else { throw POSIXFailure(operation: "mkdtemp") }
        directory = String(cString: created)
        fd = socket(AF_UNIX, Int32(type.rawValue), 0)
        guard fd >= 0 else { throw POSIXFailure(operation: "socket") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let path = Array((directory + "/s").utf8) + [0]
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: path) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard bound == 0 else { throw POSIXFailure(operation: "bind") }
        if listening, listen(fd, 1) != 0 { throw POSIXFailure(operation: "listen") }
    }

    deinit {
        close(fd)
        unlink(directory + "/s")
        rmdir(directory)
    }
}
