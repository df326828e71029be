#if canImport(Glibc)
import Glibc
#endif

/// Raw Unix stream sockets: the measuring clients talk to the daemon with plain system calls, so that what is
/// timed is the daemon and the kernel, not a client library.
enum UnixSocket {
    /// A connected, blocking socket.
    static func connect(_ path: String) throws(BenchError) -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .system("socket", errno) }
        var address: sockaddr_un
        do throws(BenchError) {
            address = try Self.address(path)
        } catch {
            close(fd)
            throw error
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard result == 0 else {
            let code = errno
            close(fd)
            throw .system("connect \(path)", code)
        }
        return fd
    }

    /// A listening stream socket at `path` (a stale file there is removed first).
    static func listen(_ path: String) throws(BenchError) -> Int32 {
        var address = try Self.address(path)
        unlink(path)
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .system("socket", errno) }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard result == 0, Glibc.listen(fd, 4096) == 0 else {
            let code = errno
            close(fd)
            throw .system("listen \(path)", code)
        }
        return fd
    }

    /// Sends one `sd_notify` datagram (`READY=1`) to `path`; failures are ignored, as `sd_notify` callers do.
    static func notify(_ path: String, _ message: String) {
        // A bench waiting for READY=1 bound this path with the same `address`, so a path too long here has no
        // listener to tell.
        guard var address = try? Self.address(path) else { return }
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return }
        defer { close(fd) }
        let bytes = Array(message.utf8)
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { target in
                bytes.withUnsafeBytes { raw in
                    sendto(fd, raw.baseAddress, raw.count, 0, target, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
        }
    }

    static func address(_ path: String) throws(BenchError) -> sockaddr_un {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            throw BenchError("socket path \(path) is too long")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in bytes.enumerated() { raw[index] = byte }
        }
        return address
    }

    /// Writes every byte, waiting while the socket buffer is full (also on a non-blocking socket).
    static func sendAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws(BenchError) {
        guard let base = bytes.baseAddress else { return }
        var offset = 0
        while offset < bytes.count {
            let written = send(fd, base + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
            if written < 0 {
                let code = errno
                if code == EINTR { continue }
                if code == EAGAIN || code == EWOULDBLOCK {
                    var descriptor = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                    _ = poll(&descriptor, 1, 100)
                    continue
                }
                throw .system("send", code)
            }
            offset += written
        }
    }

    static func sendAll(_ fd: Int32, _ bytes: [UInt8]) throws(BenchError) {
        let result = bytes.withUnsafeBytes { raw -> Result<Void, BenchError> in
            do throws(BenchError) {
                try sendAll(fd, raw)
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        try result.get()
    }

    static func setNonBlocking(_ fd: Int32) {
        let flags = fcntl(fd, F_GETFL)
        _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
    }

    /// Lets the process hold as many descriptors as the hard limit allows: 1,000 subscribers need more than the
    /// usual soft limit of 1,024, and the daemon inherits the raised limit.
    static func raiseDescriptorLimit() {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
        limit.rlim_cur = limit.rlim_max
        _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }
}
