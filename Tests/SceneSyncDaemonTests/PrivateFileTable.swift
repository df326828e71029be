import Foundation
import Glibc
import Testing

/// Runs file writes on a thread of its own whose descriptor table no other thread shares.
///
/// The tests of this process start children at any moment, and until a child calls `exec` it holds a copy of every
/// descriptor of the process. A file closed meanwhile is really closed, and its `IN_CLOSE_WRITE` queued, only when
/// the child lets go: after later writes, or after a test's marker. A descriptor opened by a thread with a table of
/// its own is copied into no child, so the kernel queues the events in the order of the calls.
enum PrivateFileTable {
    private typealias CloseRange = @convention(c) (UInt32, UInt32, Int32) -> Int32

    /// `close_range(2)`, which Swift's Glibc module does not declare (glibc 2.34 and later have it).
    private static let closeRange: CloseRange? = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "close_range").map {
        unsafeBitCast($0, to: CloseRange.self)
    }

    /// `CLOSE_RANGE_UNSHARE` of `<linux/close_range.h>`.
    private static let unshareFlag: Int32 = 1 << 1

    /// Runs `work` on a new thread that first takes a table of its own, without its copies of the other tests'
    /// descriptors (from 3 on): holding them would delay those tests' closes in turn.
    static func run<Value: Sendable>(_ work: @escaping @Sendable () throws -> Value) async throws -> Value {
        let closeRange = try #require(closeRange, "close_range(2) is missing: glibc 2.34 or later has it")
        return try await onThreadOfItsOwn(named: "private-fds") {
            guard closeRange(3, UInt32.max, unshareFlag) == 0 else {
                throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
            }
            return try work()
        }
    }
}
