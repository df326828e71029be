#if canImport(Glibc)
import Glibc
#endif

/// Runs file writes on a thread of its own whose descriptor table no other thread shares.
///
/// The tests of a process start children at any moment, and until a child calls `exec` it holds a copy of every
/// descriptor of the process. A file closed meanwhile is really closed, and its `IN_CLOSE_WRITE` queued, only when
/// the child lets go: after later writes, or after the marker or `sync` that was to come after it. A descriptor
/// opened by a thread with a table of its own is copied into no child, so the kernel queues the events in the order
/// of the calls.
public enum PrivateFileTable {
    /// A system call failed, or `close_range(2)` is missing (glibc 2.34 and later have it).
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    private typealias CloseRange = @convention(c) (UInt32, UInt32, Int32) -> Int32

    /// `close_range(2)`, which Swift's Glibc module does not declare.
    private static let closeRange: CloseRange? = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "close_range").map {
        unsafeBitCast($0, to: CloseRange.self)
    }

    /// `CLOSE_RANGE_UNSHARE` of `<linux/close_range.h>`.
    private static let unshareFlag: Int32 = 1 << 1

    /// Runs `work` on a new thread that first takes a table of its own, without its copies of the other tests'
    /// descriptors (from 3 on): holding them would delay those tests' closes in turn.
    public static func run<Value: Sendable>(_ work: @escaping @Sendable () throws -> Value) async throws -> Value {
        guard let closeRange else { throw Failure(description: "close_range(2) is missing: glibc 2.34 has it") }
        return try await onThreadOfItsOwn(named: "private-fds") {
            guard closeRange(3, UInt32.max, unshareFlag) == 0 else { throw failure("close_range") }
            return try work()
        }
    }

    /// Writes `bytes` to the file at `path` in place: one `open(O_TRUNC)`, one `write()`, one `close()`, as an app
    /// that rewrites its file does.
    public static func write(_ bytes: [UInt8], toFile path: String) async throws {
        try await run { try writeHere([bytes], toFile: path) }
    }

    /// One `open(O_TRUNC)`, one `write()` per chunk, one `close()`, on the calling thread: for work already inside
    /// ``run(_:)``.
    public static func writeHere(_ chunks: [[UInt8]], toFile path: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw failure("open \(path)") }
        defer { close(fd) }
        for chunk in chunks {
            guard chunk.withUnsafeBytes({ Glibc.write(fd, $0.baseAddress, $0.count) }) == chunk.count else {
                throw failure("write \(path)")
            }
        }
    }

    private static func failure(_ operation: String) -> Failure {
        Failure(description: "\(operation): \(String(cString: strerror(errno)))")
    }
}
