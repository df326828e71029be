import Foundation

/// The waiting primitives every integration helper is built on. None of them blocks a thread of Swift's cooperative
/// pool: a blocking system call (`poll`, `waitpid`, `connect`) runs on a thread of its own, bridged back with a
/// checked continuation, and everything else waits on a continuation that an event resumes. Every wait has a
/// deadline, and running past it throws ``WaitTimeout`` naming what the test was waiting for, so a broken daemon
/// fails the test instead of hanging the suite. With the pool free, the suite can run its tests in parallel.

/// A wait that ran past its deadline.
struct WaitTimeout: Error, CustomStringConvertible {
    var what: String
    var description: String { "timed out waiting for \(what)" }
}

/// Blocking work on a dedicated thread, so that it never occupies one of the cooperative pool's few threads (two on
/// this machine): a blocked pool thread is a test that cannot run, and with every pool thread blocked, a deadlock.
enum DedicatedThread {
    static func run<T: Sendable>(_ name: String, _ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            let thread = Thread { continuation.resume(returning: body()) }
            thread.name = name
            // The bodies are single system calls and small loops; a small stack keeps many waits cheap.
            thread.stackSize = 512 * 1024
            thread.start()
        }
    }
}

/// Waiting for a file descriptor to become readable or writable.
enum DescriptorWait {
    enum Outcome: Sendable {
        case ready
        case timedOut
        case failed(Int32)
    }

    /// Waits until `fd` has any of `events` (or an error or hang-up, which the caller's next read or write reports),
    /// or until `deadline`. The wait is handed to ``Poller/shared``, one dedicated thread in `poll` for all of them;
    /// a cancelled task is resumed at once with `CancellationError`.
    static func wait(_ fd: Int32, for events: Int16, until deadline: ContinuousClock.Instant) async throws -> Outcome {
        try await Poller.shared.wait(fd, for: events, until: deadline)
    }
}

/// One dedicated thread that sits in `poll` for every descriptor a test is waiting on, and resumes each waiter when
/// its descriptor is ready or its deadline passes. Registering a wait costs a continuation and a byte on a wake-up
/// socket, not a thread, so a test that makes thousands of round trips stays cheap.
final class Poller: @unchecked Sendable {
    static let shared = Poller()

    private struct Waiter {
        var fd: Int32
        var events: Int16
        var deadline: ContinuousClock.Instant
        var continuation: CheckedContinuation<DescriptorWait.Outcome?, Never>
    }

    private let lock = NSLock()
    private var waiters: [Int: Waiter] = [:]
    private var nextID = 0
    private let wakeRead: Int32
    private let wakeWrite: Int32

    private init() {
        var pair: [Int32] = [-1, -1]
        let made = socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair)
        precondition(made == 0, "socketpair for the poller: \(String(cString: strerror(errno)))")
        wakeRead = pair[0]
        wakeWrite = pair[1]
        _ = fcntl(wakeRead, F_SETFL, O_NONBLOCK)
        _ = fcntl(wakeWrite, F_SETFL, O_NONBLOCK)
        let thread = Thread { [unowned self] in self.run() }
        thread.name = "test poller"
        thread.start()
    }

    func wait(
        _ fd: Int32, for events: Int16, until deadline: ContinuousClock.Instant
    ) async throws
        -> DescriptorWait.Outcome
    {
        let id = lock.withLock {
            nextID += 1
            return nextID
        }
        let outcome = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<DescriptorWait.Outcome?, Never>) in
                lock.lock()
                guard !Task.isCancelled else {
                    lock.unlock()
                    continuation.resume(returning: nil)
                    return
                }
                waiters[id] = Waiter(fd: fd, events: events, deadline: deadline, continuation: continuation)
                lock.unlock()
                wake()
            }
        } onCancel: {
            finish(id, nil)
        }
        guard let outcome else { throw CancellationError() }
        return outcome
    }

    private func finish(_ id: Int, _ outcome: DescriptorWait.Outcome?) {
        let waiter = lock.withLock { waiters.removeValue(forKey: id) }
        waiter?.continuation.resume(returning: outcome)
    }

    private func wake() {
        var byte: UInt8 = 1
        _ = send(wakeWrite, &byte, 1, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
    }

    private func run() {
        var drain = [UInt8](repeating: 0, count: 256)
        while true {
            let now = ContinuousClock.now
            let current = lock.withLock { waiters }
            var expired: [Int] = []
            var ids: [Int] = []
            var descriptors = [pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)]
            var nearest: ContinuousClock.Instant?
            for (id, waiter) in current {
                if waiter.deadline <= now {
                    expired.append(id)
                    continue
                }
                ids.append(id)
                descriptors.append(pollfd(fd: waiter.fd, events: waiter.events, revents: 0))
                nearest = min(nearest ?? waiter.deadline, waiter.deadline)
            }
            for id in expired { finish(id, .timedOut) }
            var timeout: Int32 = -1
            if let nearest {
                let remaining = nearest - now
                timeout = Int32(
                    min(
                        remaining.components.seconds * 1000 + remaining.components.attoseconds / 1_000_000_000_000_000
                            + 1, Int64(Int32.max)))
            }
            let count = poll(&descriptors, nfds_t(descriptors.count), timeout)
            if count < 0 {
                guard errno == EINTR else {
                    for id in ids { finish(id, .failed(errno)) }
                    continue
                }
                continue
            }
            if descriptors[0].revents != 0 {
                while drain.withUnsafeMutableBytes({ recv(wakeRead, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) })
                    > 0
                {}
            }
            for (index, id) in ids.enumerated() where descriptors[index + 1].revents != 0 {
                let revents = descriptors[index + 1].revents
                finish(id, revents & Int16(POLLNVAL) != 0 ? .failed(EBADF) : .ready)
            }
        }
    }
}

/// A value that changes over time, and tasks waiting for it to reach a state: an asynchronous condition variable.
///
/// Writers call ``update(_:)``; every waiter is woken and checks its condition again. A waiter registers under the
/// same lock as its check, so no update is ever missed between the two.
final class AsyncVariable<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var current: Value
    private var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
    private var nextWaiter = 0

    init(_ value: Value) { current = value }

    var value: Value {
        lock.lock()
        defer { lock.unlock() }
        return current
    }

    /// Changes the value and wakes every waiter.
    @discardableResult
    func update<Result>(_ body: (inout Value) -> Result) -> Result {
        lock.lock()
        let result = body(&current)
        let woken = waiters
        waiters.removeAll()
        lock.unlock()
        for continuation in woken.values { continuation.resume() }
        return result
    }

    /// Waits until `check` returns a result, and returns it. Throws ``WaitTimeout`` (naming `what`) at `deadline`
    /// and `CancellationError` when the task is cancelled.
    func wait<Result>(
        for what: @autoclosure () -> String, until deadline: ContinuousClock.Instant,
        _ check: (Value) -> Result?
    ) async throws -> Result {
        while true {
            let (result, id) = checkOrRegisterID(check)
            if let result { return result }
            try Task.checkCancellation()
            guard ContinuousClock.now < deadline else { throw WaitTimeout(what: what()) }
            // The deadline is a timer that wakes this waiter, not a guess at how long the event takes.
            let timer = Task { [weak self] in
                try? await Task.sleep(until: deadline, clock: .continuous)
                self?.wake(id)
            }
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    lock.lock()
                    // Checked again under the lock that updates take: an update since the first check, or a
                    // cancellation, resumes at once instead of waiting for the next one.
                    if check(current) != nil || Task.isCancelled {
                        lock.unlock()
                        continuation.resume()
                        return
                    }
                    waiters[id] = continuation
                    lock.unlock()
                }
            } onCancel: {
                self.wake(id)
            }
            timer.cancel()
        }
    }

    /// The check's result, or a fresh waiter id when it has none yet. Synchronous: locks are not held across
    /// suspension points.
    private func checkOrRegisterID<Result>(_ check: (Value) -> Result?) -> (Result?, Int) {
        lock.lock()
        defer { lock.unlock() }
        if let result = check(current) { return (result, -1) }
        nextWaiter += 1
        return (nil, nextWaiter)
    }

    private func wake(_ id: Int) {
        lock.lock()
        let continuation = waiters.removeValue(forKey: id)
        lock.unlock()
        continuation?.resume()
    }
}

/// Runs `first` and `second` concurrently and returns whichever finishes first, cancelling the other. Both must
/// honour cancellation (the waits above do).
func firstOf<T: Sendable>(
    _ first: @escaping @Sendable () async throws -> T, _ second: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask(operation: first)
        group.addTask(operation: second)
        defer { group.cancelAll() }
        guard let result = try await group.next() else { throw CancellationError() }
        return result
    }
}

/// Checks a condition the daemon announces no event for (a connection count that drops after a close, a closed
/// client's seat that frees up), again after each short pause, until `timeout`. The pause only spaces the checks
/// so that they do not spin a core; the outcome comes from the check, never from the pause. Returns whether the
/// condition became true.
func eventually(
    timeout: Duration = .seconds(15), every interval: Duration = .milliseconds(10),
    _ condition: () async throws -> Bool
) async rethrows -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try? await Task.sleep(for: interval)  // cancelled: the deadline check ends the loop
    }
    return try await condition()
}

extension Duration {
    /// In seconds, for messages and `poll` timeouts.
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
