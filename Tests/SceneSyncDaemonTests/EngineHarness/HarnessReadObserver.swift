import Glibc

/// Which scene files were read, as the kernel saw it: an inotify watch of its own on the scenes directory, for
/// `IN_ACCESS` only, which the engine's watcher does not ask for. The harness reads files too, so it takes what was
/// read before each read of its own (``EngineHarness/file(_:)``), and drops what its own read added.
final class HarnessReadObserver {
    private let descriptor: Int32
    /// The scene file names read since the last take.
    private var read: Set<String> = []

    init(directory: String) throws {
        descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard descriptor >= 0 else { throw HarnessError("inotify_init1: errno \(errno)") }
        guard inotify_add_watch(descriptor, directory, UInt32(IN_ACCESS)) >= 0 else {
            Glibc.close(descriptor)
            throw HarnessError("inotify_add_watch \(directory): errno \(errno)")
        }
    }

    func close() {
        Glibc.close(descriptor)
    }

    /// Notes the names read so far; `keep: false` drops them (the harness's own reads).
    func collect(keep: Bool = true) {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { return }
            guard keep else { continue }
            var offset = 0
            let header = MemoryLayout<inotify_event>.size
            while offset + header <= count {
                let length = buffer.withUnsafeBytes {
                    Int($0.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
                }
                let name = buffer[(offset + header)..<min(offset + header + length, count)].prefix { $0 != 0 }
                read.insert(String(decoding: name, as: UTF8.self))
                offset += header + length
            }
        }
    }

    /// The scene file names read since the last take.
    func take() -> Set<String> {
        collect()
        defer { read = [] }
        return read
    }
}
