import Foundation
import Glibc
import NIOCore
import SceneSyncCore
import SceneSyncTestKit
import Synchronization
import Testing

@testable import SceneSyncDaemon

/// Every wait is on an event; the timeout of ``EventReader`` only turns a missing event into a failure.
@Suite struct InotifyWatcherTests {
    @Test func atomicReplaceYieldsExactlyOneChange() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let watcher = try InotifyWatcher(directory: directory.path)
        defer { watcher.close() }
        var events = EventReader(watcher)

        try await directory.write("a.json.tmp", "[1]")
        try directory.rename("a.json.tmp", to: "a.json")
        try await directory.write(".scenesync-cookie-1")
        #expect(try await events.upTo(marker: ".scenesync-cookie-1") == [.changed(scene("a"))])

        // Replacing an existing file is the same single event.
        try await directory.write("a.json.tmp", "[2]")
        try directory.rename("a.json.tmp", to: "a.json")
        try await directory.write(".scenesync-cookie-2")
        #expect(try await events.upTo(marker: ".scenesync-cookie-2") == [.changed(scene("a"))])
    }

    @Test func inPlaceRewriteYieldsExactlyOneChange() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        try await directory.write("a.json", "[]")
        let watcher = try InotifyWatcher(directory: directory.path)
        defer { watcher.close() }
        var events = EventReader(watcher)

        // Several write() calls on one open file: IN_MODIFY for each, but one IN_CLOSE_WRITE.
        try await directory.write("a.json", chunks: ["[1,", "2,", "3]"])
        try await directory.write(".scenesync-cookie-1")
        #expect(try await events.upTo(marker: ".scenesync-cookie-1") == [.changed(scene("a"))])

        // Reading the file is not a change.
        _ = try directory.read("a.json")
        try await directory.write(".scenesync-cookie-2")
        #expect(try await events.upTo(marker: ".scenesync-cookie-2") == [])
    }

    @Test func deleteYieldsRemoved() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        try await directory.write("a.json")
        let watcher = try InotifyWatcher(directory: directory.path)
        defer { watcher.close() }
        var events = EventReader(watcher)

        try directory.delete("a.json")
        try await directory.write(".scenesync-cookie-1")
        #expect(try await events.upTo(marker: ".scenesync-cookie-1") == [.removed(scene("a"))])
    }

    @Test func movesOutInAndWithinYieldRemovedAndChanged() async throws {
        let directory = try ScratchDirectory()
        let outside = try ScratchDirectory()
        defer {
            directory.remove()
            outside.remove()
        }
        try await directory.write("a.json")
        try await outside.write("c.json")
        let watcher = try InotifyWatcher(directory: directory.path)
        defer { watcher.close() }
        var events = EventReader(watcher)

        #expect(rename(directory.path("a.json"), outside.path("a.json")) == 0)
        #expect(rename(outside.path("c.json"), directory.path("c.json")) == 0)
        try directory.rename("c.json", to: "d.json")
        try await directory.write(".scenesync-cookie-1")
        #expect(
            try await events.upTo(marker: ".scenesync-cookie-1") == [
                .removed(scene("a")), .changed(scene("c")), .removed(scene("c")), .changed(scene("d")),
            ])
    }

    @Test func ignoredNamesYieldNothing() async throws {
        let directory = try ScratchDirectory()
        let outside = try ScratchDirectory()
        defer {
            directory.remove()
            outside.remove()
        }
        let watcher = try InotifyWatcher(directory: directory.path)
        defer { watcher.close() }
        var events = EventReader(watcher)

        let ignored = [
            ".hidden.json", "a.json.tmp", "a.json~", "a.txt", "bad name.json", "x.json.json", ".json", "-a.json",
            "a", String(repeating: "n", count: 129) + ".json",
        ]
        for name in ignored {
            try await directory.write(name)  // close-write
            try await directory.write(name, chunks: ["[", "]"])  // in-place rewrite
            try directory.rename(name, to: name + ".moved")  // moved-from under an ignored name
            try directory.rename(name + ".moved", to: name)  // moved-to under an ignored name
            try directory.delete(name)  // delete
        }
        // Directories named like scene files, created, renamed, filled, moved in and out, and removed.
        try directory.makeDirectory("d.json")
        try await directory.write("d.json/inner.json")
        try directory.rename("d.json", to: "e.json")
        #expect(rename(directory.path("e.json"), outside.path("e.json")) == 0)
        try outside.makeDirectory("f.json")
        #expect(rename(outside.path("f.json"), directory.path("f.json")) == 0)
        try directory.removeDirectory("f.json")
        // A marker's own deletion is not an event either.
        try await directory.write(".scenesync-cookie-0")
        #expect(try await events.next() == .marker(".scenesync-cookie-0"))
        try directory.delete(".scenesync-cookie-0")

        try await directory.write(".scenesync-cookie-1")
        #expect(try await events.next() == .marker(".scenesync-cookie-1"))
    }

    @Test func markersAreReportedByName() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let watcher = try InotifyWatcher(directory: directory.path)
        defer { watcher.close() }
        var events = EventReader(watcher)

        try await directory.write(".scenesync-sync.tmp")
        try directory.rename(".scenesync-sync.tmp", to: ".scenesync-sync")
        // Both the temp name and the final name are markers: each arrived under its own name.
        #expect(try await events.next() == .marker(".scenesync-sync.tmp"))
        #expect(try await events.next() == .marker(".scenesync-sync"))
    }

    @Test func rapidWritesToOneFileArriveInOrderWithTheLastOneLast() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let watcher = try InotifyWatcher(directory: directory.path)
        defer { watcher.close() }
        var events = EventReader(watcher)

        try await directory.write((0..<1_000).map { ("a.json", ["[\($0)]"]) } + [("b.json", ["[]"])])
        try await directory.write(".scenesync-cookie-1")
        let seen = try await events.upTo(marker: ".scenesync-cookie-1")
        // The kernel merges identical adjacent events, so fewer may arrive, but never more and never reordered.
        #expect((2...1_001).contains(seen.count))
        #expect(seen.dropLast().allSatisfy { $0 == .changed(scene("a")) })
        #expect(seen.last == .changed(scene("b")))
    }

    /// Adjacent events differ, so the kernel merges none of them. This process starts children all the while, as
    /// the integration tests beside it do, which once reordered the closes (see ``PrivateFileTable``).
    @Test func alternatingWritesArriveInKernelOrder() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let watcher = try InotifyWatcher(directory: directory.path)
        defer { watcher.close() }
        var events = EventReader(watcher)

        let names = (0..<1_000).map { $0.isMultiple(of: 2) ? "a" : "b" }
        let starter = ChildStarter()
        async let started = starter.run()
        try await directory.write(names.enumerated().map { ("\($0.element).json", ["[\($0.offset)]"]) })
        try await directory.write(".scenesync-cookie-1")
        starter.stop()
        #expect(try await started > 0, "no child was started during the writes")
        let seen = try await events.upTo(marker: ".scenesync-cookie-1")
        let expected = names.map { SceneDirectoryEvent.changed(scene($0)) }
        #expect(seen == expected, "\(firstDifference(seen, expected))")
    }

    @Test func aWriteToAFileStillOpenIsReportedAsModifiedUntilItsClose() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let watcher = try InotifyWatcher(directory: directory.path)
        defer { watcher.close() }
        var events = EventReader(watcher)
        events.includeModified = true

        let fd = open(directory.path + "/a.json", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        #expect(fd >= 0)
        _ = write(fd, "[1", 2)
        #expect(try await events.next() == .modified(scene("a")))
        _ = write(fd, "]", 1)
        close(fd)
        // The kernel may merge the second modification into the first; the close always ends it.
        var rest = try await events.next()
        if rest == .modified(scene("a")) { rest = try await events.next() }
        #expect(rest == .changed(scene("a")))
        // A rename into place is final at once: no modification of the scene's own name.
        try await directory.write(".a.tmp")
        try directory.rename(".a.tmp", to: "a.json")
        #expect(try await events.next() == .changed(scene("a")))
    }

    @Test func takeEventsReadsWhatTheKernelHoldsWithoutWaitingForTheThread() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let watcher = try InotifyWatcher(directory: directory.path)
        defer { watcher.close() }
        try await directory.write("a.json")
        // The event is in the kernel's queue as soon as close() returned; the loop has queued it or this call
        // reads it, on the loop, so taking now sees it either way.
        let taken = try await watcher.eventLoop.submit { watcher.takeEvents() }.get()
        #expect(taken.filter { if case .modified = $0 { false } else { true } } == [.changed(scene("a"))])
    }

    @Test func injectedOverflowFollowsEarlierEvents() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let watcher = try InotifyWatcher(directory: directory.path)
        defer { watcher.close() }
        var events = EventReader(watcher)

        try await directory.write("a.json")
        watcher.injectOverflow()
        #expect(try await events.next() == .changed(scene("a")))
        #expect(try await events.next() == .overflow)

        // The watcher keeps working afterwards.
        try await directory.write(".scenesync-cookie-1")
        #expect(try await events.next() == .marker(".scenesync-cookie-1"))
    }

    @Test func removingTheDirectoryYieldsDirectoryGoneAndFinishes() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        try await directory.write("a.json")
        let watcher = try InotifyWatcher(directory: directory.path)
        defer { watcher.close() }
        var events = EventReader(watcher)

        try directory.delete("a.json")
        #expect(rmdir(directory.path) == 0)
        #expect(try await events.remaining() == [.removed(scene("a")), .directoryGone])
        // After the end, the handle's methods are harmless.
        watcher.injectOverflow()
        watcher.close()
    }

    @Test func movingTheDirectoryYieldsDirectoryGoneAndFinishes() async throws {
        let parent = try ScratchDirectory()
        defer { parent.remove() }
        try parent.makeDirectory("scenes")
        let watcher = try InotifyWatcher(directory: parent.path("scenes"))
        defer { watcher.close() }
        var events = EventReader(watcher)

        try parent.rename("scenes", to: "elsewhere")
        #expect(try await events.remaining() == [.directoryGone])
    }

    @Test func closeFinishesTheStreamPromptly() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let watcher = try InotifyWatcher(directory: directory.path)
        var events = EventReader(watcher)

        // Closed from another task while this one waits for events.
        let closer = Task { watcher.close() }
        #expect(try await events.remaining() == [])
        await closer.value
        watcher.close()
        watcher.injectOverflow()
    }

    @Test func droppingTheWatcherFinishesTheStream() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let path = directory.path
        let consumer = Task {
            var iterator = try InotifyWatcher(directory: path).events.makeAsyncIterator()
            // The handle is gone: the thread and its descriptors must not outlive it.
            return await iterator.next()
        }
        // Cancelling the consumer would also end the stream, so the guard says whether it had to.
        let watchdog = Task {
            guard (try? await Task.sleep(for: .seconds(10))) != nil else { return false }
            consumer.cancel()
            return true
        }
        #expect(try await consumer.value == nil)
        watchdog.cancel()
        #expect(await watchdog.value == false)
    }

    @Test func cancellingTheConsumerEndsTheStream() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let watcher = try InotifyWatcher(directory: directory.path)
        defer { watcher.close() }

        let consumer = Task {
            var count = 0
            for await batch in watcher.events { count += batch.count }
            return count
        }
        consumer.cancel()
        // The stream ends on cancellation instead of waiting for an event that never comes.
        #expect(await consumer.value == 0)
    }

    @Test func unusableDirectoriesThrowTheMatchingError() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        try await directory.write("file")

        let missing = directory.path("missing")
        #expect(throws: WatcherError.directoryMissing(path: missing)) { try InotifyWatcher(directory: missing) }
        let file = directory.path("file")
        #expect(throws: WatcherError.notADirectory(path: file)) { try InotifyWatcher(directory: file) }
        #expect(throws: WatcherError.directoryMissing(path: "")) { try InotifyWatcher(directory: "") }
    }

    // As root, IntegrationTests' UnprivilegedTests checks this error through a daemon run as nobody.
    @Test(.enabled(if: getuid() != 0, "root may read any directory; UnprivilegedTests checks this error as nobody"))
    func unreadableDirectoryThrowsPermissionDenied() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        try directory.makeDirectory("locked", mode: 0)
        let locked = directory.path("locked")
        #expect(throws: WatcherError.permissionDenied(path: locked)) { try InotifyWatcher(directory: locked) }
        chmod(locked, 0o700)
    }

    @Test func errorsNameTheFix() {
        #expect(WatcherError.directoryMissing(path: "/x").description.contains("/x"))
        #expect(WatcherError.directoryMissing(path: "/x").description.contains("No such file or directory"))
        #expect(WatcherError.notADirectory(path: "/x").description.contains("Not a directory"))
        #expect(WatcherError.watchLimitReached(path: "/x").description.contains("fs.inotify.max_user_watches"))
        #expect(WatcherError.instanceLimitReached.description.contains("fs.inotify.max_user_instances"))
        #expect(
            WatcherError.systemError(operation: "inotify_add_watch", path: "/x", errno: ENOMEM).description
                .contains("inotify_add_watch failed (Cannot allocate memory)"))
        #expect(WatcherError.addWatch(path: "/x", errno: ENOSPC) == .watchLimitReached(path: "/x"))
        #expect(WatcherError.addWatch(path: "/x", errno: EACCES) == .permissionDenied(path: "/x"))
    }

    @Test func decoderMapsKernelOnlyEvents() {
        var buffer: [UInt8] = []
        func append(wd: Int32, mask: Int32, name: String = "") {
            var padded = Array(name.utf8)
            if !padded.isEmpty { padded += [UInt8](repeating: 0, count: 16 - padded.count % 16) }
            withUnsafeBytes(of: wd) { buffer += $0 }
            withUnsafeBytes(of: UInt32(bitPattern: mask)) { buffer += $0 }
            withUnsafeBytes(of: UInt32(0)) { buffer += $0 }
            withUnsafeBytes(of: UInt32(padded.count)) { buffer += $0 }
            buffer += padded
        }
        append(wd: -1, mask: IN_Q_OVERFLOW)
        append(wd: 1, mask: IN_CLOSE_WRITE, name: "a.json")
        append(wd: 1, mask: IN_MOVED_FROM | IN_ISDIR, name: "d.json")
        append(wd: 2, mask: IN_CLOSE_WRITE, name: "foreign.json")
        append(wd: 1, mask: IN_DELETE, name: ".scenesync-cookie")
        append(wd: 1, mask: IN_MOVED_FROM, name: "b.json")
        append(wd: 1, mask: IN_UNMOUNT)
        append(wd: 1, mask: IN_IGNORED)
        let decoded = buffer.withUnsafeBytes { InotifyEventDecoder.decode($0, watchDescriptor: 1) }
        #expect(decoded.events == [.overflow, .changed(scene("a")), .removed(scene("b")), .directoryGone])
        #expect(decoded.watchEnded)

        // A truncated buffer yields the complete events only.
        let truncated = buffer.prefix(16 + 20).withUnsafeBytes {
            InotifyEventDecoder.decode($0, watchDescriptor: 1)
        }
        #expect(truncated.events == [.overflow])
        #expect(!truncated.watchEnded)

        // The daemon's own rename (its temp name, paired by cookie) is skipped; an app's rename right after it, or
        // another process's temp name, is not.
        var renames: [UInt8] = []
        func appendMove(mask: Int32, cookie: UInt32, name: String) {
            Self.appendMoveRecord(mask: mask, cookie: cookie, name: name, to: &renames)
        }
        let ownTemp = EngineCore.tempName(scene("a"))
        appendMove(mask: IN_MOVED_FROM, cookie: 7, name: ownTemp)
        appendMove(mask: IN_MOVED_TO, cookie: 7, name: "a.json")
        appendMove(mask: IN_MOVED_FROM, cookie: 8, name: ".a.json.tmp-app")
        appendMove(mask: IN_MOVED_TO, cookie: 8, name: "a.json")
        appendMove(mask: IN_MOVED_FROM, cookie: 9, name: ".a.json.1.tmp")
        appendMove(mask: IN_MOVED_TO, cookie: 9, name: "a.json")
        appendMove(mask: IN_MOVED_FROM, cookie: 10, name: ownTemp)
        appendMove(mask: IN_MOVED_TO, cookie: 11, name: "a.json")
        let moves = renames.withUnsafeBytes { InotifyEventDecoder.decode($0, watchDescriptor: 1) }
        #expect(moves.events == [.changed(scene("a")), .changed(scene("a")), .changed(scene("a"))])

        // Names that are not UTF-8 cannot be scenes.
        #expect(InotifyEventDecoder.event(mask: UInt32(IN_CLOSE_WRITE), name: nil) == nil)
        #expect(InotifyEventDecoder.event(mask: UInt32(IN_CLOSE_WRITE), name: "") == nil)
        #expect(InotifyEventDecoder.event(mask: UInt32(IN_MOVED_TO), name: ".scenesync-x") == .marker(".scenesync-x"))
    }
}

/// Reads the watcher's stream one event at a time, failing instead of hanging when an expected event never comes.
private struct EventReader {
    struct TimedOut: Error, CustomStringConvertible {
        var description: String { "no event within the timeout" }
    }
    struct Ended: Error, CustomStringConvertible {
        var description: String { "the stream ended" }
    }

    let watcher: InotifyWatcher
    var iterator: InotifyWatcher.Events.AsyncIterator
    var pending: [SceneDirectoryEvent] = []
    let timeout: Duration

    /// Generous: it only turns a lost event into a failure instead of a hang. Under the parallel suite on a loaded
    /// 2-core machine, the batch after 1,000 writes once took more than 10 s to be handed over.
    init(_ watcher: InotifyWatcher, timeout: Duration = .seconds(60)) {
        self.watcher = watcher
        self.iterator = watcher.events.makeAsyncIterator()
        self.timeout = timeout
    }

    /// The next batch, or `nil` at the end. A watchdog closes the watcher when the timeout passes, which ends the
    /// wait; the flag tells that apart from a genuine end.
    mutating func nextBatch() async throws -> [SceneDirectoryEvent]? {
        let watcher = self.watcher
        let timeout = self.timeout
        let (batch, timedOut) = await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                guard (try? await Task.sleep(for: timeout)) != nil else { return false }
                watcher.close()
                return true
            }
            let batch = await iterator.next()
            group.cancelAll()
            return (batch, await group.next() ?? false)
        }
        if timedOut { throw TimedOut() }
        return batch
    }

    /// Whether `.modified` (a write to a file still open) is reported; most tests are about arrivals only.
    var includeModified = false

    mutating func next() async throws -> SceneDirectoryEvent {
        while pending.isEmpty {
            guard let batch = try await nextBatch() else { throw Ended() }
            pending = filtered(batch)
        }
        return pending.removeFirst()
    }

    func filtered(_ batch: [SceneDirectoryEvent]) -> [SceneDirectoryEvent] {
        guard !includeModified else { return batch }
        return batch.filter { if case .modified = $0 { false } else { true } }
    }

    /// Every event before the marker; the marker is consumed.
    mutating func upTo(marker: String) async throws -> [SceneDirectoryEvent] {
        var seen: [SceneDirectoryEvent] = []
        while true {
            let event = try await next()
            if event == .marker(marker) { return seen }
            seen.append(event)
        }
    }

    /// Every event until the stream ends.
    mutating func remaining() async throws -> [SceneDirectoryEvent] {
        var seen = pending
        pending = []
        while let batch = try await nextBatch() {
            seen += filtered(batch)
        }
        return seen
    }
}

/// Starts `/bin/true` and waits for it, over and over on a thread of its own, until stopped.
private final class ChildStarter: Sendable {
    private let stopped = Atomic(false)

    /// How many children it started; it starts one at least.
    func run() async throws -> Int {
        try await onThreadOfItsOwn(named: "child-starter") {
            var started = 0
            repeat {
                var pid: pid_t = 0
                let argv: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/true"), nil]
                defer { argv.forEach { free($0) } }
                let environment: [UnsafeMutablePointer<CChar>?] = [nil]
                guard posix_spawn(&pid, "/bin/true", nil, nil, argv, environment) == 0 else { break }
                var status: Int32 = 0
                while waitpid(pid, &status, 0) < 0, errno == EINTR {}
                started += 1
            } while !self.stopped.load(ordering: .relaxed)
            return started
        }
    }

    func stop() { stopped.store(true, ordering: .relaxed) }
}

/// Where two long event lists part, for a failure message that fits on a screen.
private func firstDifference(_ seen: [SceneDirectoryEvent], _ expected: [SceneDirectoryEvent]) -> String {
    let index =
        zip(seen, expected).enumerated().first { $0.element.0 != $0.element.1 }?.offset
        ?? min(seen.count, expected.count)
    let window = max(0, index - 3)..<(index + 4)
    let part = { (events: [SceneDirectoryEvent]) in
        events[window.clamped(to: events.indices)].map(\.description).joined(separator: " ")
    }
    return "\(seen.count) events seen, \(expected.count) expected; from index \(window.lowerBound) seen: "
        + "\(part(seen)); expected: \(part(expected))"
}

/// A fresh directory under the system temp directory, written with plain system calls so that each test controls
/// exactly which inotify events it causes.
private struct ScratchDirectory {
    let path: String

    init() throws {
        var template = Array((ConfigurationPath.normalized(NSTemporaryDirectory()) + "/ssw.XXXXXX").utf8CString)
        guard let created = mkdtemp(&template) else { throw POSIXError(.EIO) }
        path = String(cString: created)
    }

    func path(_ name: String) -> String { path + "/" + name }

    func remove() { try? FileManager.default.removeItem(atPath: path) }

    func write(_ name: String, _ text: String = "[]") async throws {
        try await write([(name, [text])])
    }

    func write(_ name: String, chunks: [String]) async throws {
        try await write([(name, chunks)])
    }

    /// For each file in turn: one `open(O_TRUNC)`, one `write()` per chunk, one `close()`; on a thread of
    /// ``PrivateFileTable``, so that each close is the last and its event comes in the order of these calls.
    func write(_ files: [(name: String, chunks: [String])]) async throws {
        try await PrivateFileTable.run {
            for file in files {
                try PrivateFileTable.writeHere(file.chunks.map { Array($0.utf8) }, toFile: path(file.name))
            }
        }
    }

    func read(_ name: String) throws -> [UInt8] {
        let fd = open(path(name), O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw POSIXError.current }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: 4096)
        let count = Glibc.read(fd, &bytes, bytes.count)
        guard count >= 0 else { throw POSIXError.current }
        return Array(bytes.prefix(count))
    }

    func rename(_ name: String, to newName: String) throws {
        guard Glibc.rename(path(name), path(newName)) == 0 else { throw POSIXError.current }
    }

    func delete(_ name: String) throws {
        guard unlink(path(name)) == 0 else { throw POSIXError.current }
    }

    func makeDirectory(_ name: String, mode: mode_t = 0o755) throws {
        guard mkdir(path(name), mode) == 0 else { throw POSIXError.current }
    }

    func removeDirectory(_ name: String) throws {
        guard rmdir(path(name)) == 0 else { throw POSIXError.current }
    }
}

extension POSIXError {
    fileprivate static var current: POSIXError { POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
}

extension InotifyWatcherTests {
    /// One inotify record of a move on watch descriptor 1, as the kernel lays it out (name padded to 16 bytes).
    static func appendMoveRecord(mask: Int32, cookie: UInt32, name: String, to buffer: inout [UInt8]) {
        var padded = Array(name.utf8)
        padded += [UInt8](repeating: 0, count: 16 - padded.count % 16)
        withUnsafeBytes(of: Int32(1)) { buffer += $0 }
        withUnsafeBytes(of: UInt32(bitPattern: mask)) { buffer += $0 }
        withUnsafeBytes(of: cookie) { buffer += $0 }
        withUnsafeBytes(of: UInt32(padded.count)) { buffer += $0 }
        buffer += padded
    }

    /// The daemon's exchange-rename (§3) moves two names: its temp file onto the scene file, and the scene file
    /// onto the temp name. Neither half is a change or a removal; an app's rename between them still is.
    @Test func decoderSkipsBothHalvesOfTheDaemonsExchange() {
        var buffer: [UInt8] = []
        func appendMove(mask: Int32, cookie: UInt32, name: String) {
            Self.appendMoveRecord(mask: mask, cookie: cookie, name: name, to: &buffer)
        }
        let ownTemp = EngineCore.tempName(scene("a"))
        appendMove(mask: IN_MOVED_FROM, cookie: 7, name: ownTemp)
        appendMove(mask: IN_MOVED_TO, cookie: 7, name: "a.json")
        appendMove(mask: IN_MOVED_FROM, cookie: 8, name: "a.json")
        appendMove(mask: IN_MOVED_TO, cookie: 8, name: ownTemp)
        // The daemon's removal: the file renamed to its temp name.
        appendMove(mask: IN_MOVED_FROM, cookie: 9, name: "b.json")
        appendMove(mask: IN_MOVED_TO, cookie: 9, name: EngineCore.tempName(scene("b")))
        // An app moving a scene file to a temp name of its own, or of another process, is a removal.
        appendMove(mask: IN_MOVED_FROM, cookie: 10, name: "c.json")
        appendMove(mask: IN_MOVED_TO, cookie: 10, name: ".c.json.1.tmp")
        appendMove(mask: IN_MOVED_FROM, cookie: 11, name: "d.json")
        let decoded = buffer.withUnsafeBytes { InotifyEventDecoder.decode($0, watchDescriptor: 1) }
        #expect(decoded.events == [.removed(scene("c")), .removed(scene("d"))])
    }

    /// The same with the kernel's own events: the daemon's replacement, creation and removal of a scene file are
    /// silent, and an app's write afterwards is reported. The queue is read once, after the renames returned (the
    /// kernel queues both halves of a rename before it returns), so each pair is in one read: the watcher's thread
    /// may read between the halves, and a pair split that way is reported, harmlessly (see
    /// `InotifyEventDecoder.movesToOwnTempName`).
    @Test func theDaemonsOwnReplacementsAreSilent() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        try await directory.write("a.json", "[1]")
        let queue = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        try #require(queue >= 0)
        defer { close(queue) }
        let watch = inotify_add_watch(queue, directory.path, InotifyWatcher.watchMask)
        try #require(watch >= 0)
        func readQueue() -> [SceneDirectoryEvent] {
            var buffer = [UInt8](repeating: 0, count: 65_536)
            let count = buffer.withUnsafeMutableBytes { read(queue, $0.baseAddress, $0.count) }
            guard count > 0 else { return [] }
            return buffer.withUnsafeBytes {
                InotifyEventDecoder.decode(UnsafeRawBufferPointer(rebasing: $0[0..<count]), watchDescriptor: watch)
                    .events
            }
        }
        let temp = EngineCore.tempName(scene("a"))

        let replaced = try FileSystem.replace(
            directory.path("a.json"), with: Array("[2]".utf8), tempName: temp, readLimit: 1024)
        #expect(replaced == .file(Array("[1]".utf8)))
        _ = try FileSystem.replace(directory.path("b.json"), with: Array("[]".utf8), tempName: temp, readLimit: 1024)
        let removed = try FileSystem.replace(directory.path("a.json"), with: nil, tempName: temp, readLimit: 1024)
        #expect(removed == .file(Array("[2]".utf8)))
        #expect(readQueue() == [])

        try await directory.write("b.json", "[3]")
        #expect(readQueue() == [.modified(scene("b")), .changed(scene("b"))])
    }
}
