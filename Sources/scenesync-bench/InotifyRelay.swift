import CEpoll

#if canImport(Glibc)
import Glibc
#endif

/// The floor of file → subscriber latency: one thread that reads inotify, reads the renamed file and writes one
/// line, `name content`, to every connected client. No parsing, no versioning, no queues: whatever scenesyncd
/// adds above this is its own cost.
///
/// It answers each new client `ready` and, when started under the bench, sends `READY=1` to `NOTIFY_SOCKET` once
/// it listens and watches, like the daemon and Redis do.
struct InotifyRelay {
    let directory: String
    let socketPath: String

    func run() throws(BenchError) {
        let inotify = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard inotify >= 0 else { throw .system("inotify_init1", errno) }
        guard inotify_add_watch(inotify, directory, UInt32(IN_MOVED_TO | IN_CLOSE_WRITE)) >= 0 else {
            throw .system("inotify_add_watch \(directory)", errno)
        }
        let listener = try UnixSocket.listen(socketPath)
        UnixSocket.setNonBlocking(listener)
        let poller = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard poller >= 0 else { throw .system("epoll_create1", errno) }
        for fd in [inotify, listener] {
            var event = epoll_event()
            event.events = EPOLLIN.rawValue
            event.data.fd = fd
            guard epoll_ctl(poller, EPOLL_CTL_ADD, fd, &event) == 0 else { throw .system("epoll_ctl", errno) }
        }
        if let notify = getenv("NOTIFY_SOCKET") {
            UnixSocket.notify(String(cString: notify), "READY=1")
        }

        var clients: [Int32] = []
        let bufferSize = 64 * 1024
        let events = UnsafeMutableRawBufferPointer.allocate(byteCount: bufferSize, alignment: 8)
        defer { events.deallocate() }
        var content = [UInt8](repeating: 0, count: bufferSize)
        var line: [UInt8] = []
        line.reserveCapacity(bufferSize)
        let prefix = directory + "/"
        var ready = [epoll_event](repeating: epoll_event(), count: 8)
        while true {
            let count = epoll_wait(poller, &ready, Int32(ready.count), -1)
            if count < 0 {
                if errno == EINTR { continue }
                throw .system("epoll_wait", errno)
            }
            for slot in 0..<Int(count) where ready[slot].data.fd == listener {
                while true {
                    let client = accept(listener, nil, nil)
                    guard client >= 0 else { break }
                    // Accepted sockets do not inherit O_NONBLOCK: the relay writes with blocking sends.
                    _ = fcntl(client, F_SETFD, FD_CLOEXEC)
                    // A client that hung up before its greeting is only dropped: the relay serves the others.
                    if (try? UnixSocket.sendAll(client, Array("ready\n".utf8))) != nil {
                        clients.append(client)
                    } else {
                        close(client)
                    }
                }
            }
            guard (0..<Int(count)).contains(where: { ready[$0].data.fd == inotify }) else { continue }
            while true {
                let length = read(inotify, events.baseAddress, bufferSize)
                guard length > 0, let base = events.baseAddress else { break }
                var offset = 0
                while offset < length {
                    let event = (base + offset).assumingMemoryBound(to: inotify_event.self).pointee
                    let nameStart = base + offset + MemoryLayout<inotify_event>.size
                    offset += MemoryLayout<inotify_event>.size + Int(event.len)
                    let name = UnsafeRawBufferPointer(start: nameStart, count: Int(event.len))
                        .prefix(while: { $0 != 0 })
                    guard name.first != UInt8(ascii: "."), name.count > 5, name.suffix(5).elementsEqual(".json".utf8)
                    else { continue }
                    let fd = open(prefix + String(decoding: name, as: UTF8.self), O_RDONLY | O_CLOEXEC)
                    guard fd >= 0 else { continue }
                    let read = content.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
                    close(fd)
                    guard read > 0 else { continue }
                    line.removeAll(keepingCapacity: true)
                    line.append(contentsOf: name)
                    line.append(UInt8(ascii: " "))
                    line.append(contentsOf: content[0..<read].lazy.map { $0 == 0x0A ? UInt8(ascii: " ") : $0 })
                    line.append(0x0A)
                    clients.removeAll { client in
                        // As above: a client that went away is dropped and its descriptor closed.
                        if (try? UnixSocket.sendAll(client, line)) == nil {
                            close(client)
                            return true
                        }
                        return false
                    }
                }
            }
        }
    }
}
