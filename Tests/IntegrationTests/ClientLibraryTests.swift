import Foundation
import SceneSyncClient
import SceneSyncCore
import Testing

/// `SceneSyncClient` against the real daemon, not a fake: its typed ops and their errors, a subscription, and a
/// resilient subscription across a restart of the daemon.
@Suite struct ClientLibraryTests {
    @Test func typedOpsRoundTripThroughTheDaemon() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.cleanup() }
        try await daemon.start()
        try await SceneSyncConnection.withConnection(to: daemon.socketPath) { connection in
            let info = try await connection.hello(client: "library-test")
            #expect(info.server == "scenesyncd")
            #expect(info.pid == daemon.pid)
            #expect(info.scenesDirectory == daemon.scenes.path)

            let page = try Element(tag: "MyApp.Page", json: Array(#"{"id":1}"#.utf8))
            let set = try await connection.set("main", path: [page])
            #expect(set.version == 1)
            let pushed = try await connection.push("main", elements: [try Element(tag: "MyApp.Page", json: [0x32])])
            #expect(pushed.revision == set.revision + 1)
            let fetched = try await connection.get("main")
            #expect(fetched.scene.path.count == 2)
            #expect(fetched.scene.path.first == page)
            // The file is the codable form, top of the stack first.
            #expect(daemon.readScene("main") == #"["MyApp.Page","2","MyApp.Page","{\"id\":1}"]"#)

            // A stale compare-and-set is the daemon's conflict, typed, with the current scene.
            do {
                _ = try await connection.set("main", path: [], ifVersion: 1)
                Issue.record("a stale if_version was accepted")
            } catch let error as SceneSyncError {
                #expect(error.code == .conflict)
                #expect(error.current?.version == 2)
            }
            #expect(try await connection.history("main").map(\.version) == [2, 1])
            #expect(try await connection.delete("main") == pushed.revision + 1)
            do {
                _ = try await connection.get("main")
                Issue.record("a deleted scene was found")
            } catch let error as SceneSyncError {
                #expect(error.code == .notFound)
            }
        }
    }

    @Test func aSubscriptionSeesTheStateThenEveryChange() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.cleanup() }
        try daemon.writeScene("app", "[1]")
        try await daemon.start()
        try await SceneSyncConnection.withConnection(to: daemon.socketPath) { connection in
            let subscription = try await connection.subscribe(patterns: ["app"])
            var events = subscription.makeAsyncIterator()
            guard case .state(let state)? = try await events.next() else {
                Issue.record("no initial state")
                return
            }
            #expect(state.version == 1)
            guard case .synced? = try await events.next() else {
                Issue.record("no synced after the state")
                return
            }
            try daemon.writeScene("app", "[1,2]")
            guard case .change(let change)? = try await events.next() else {
                Issue.record("no change for the app's write")
                return
            }
            #expect(change.version == 2)
            #expect(change.origin.source == .file)
            #expect(change.path?.count == 2)
        }
    }

    /// A clean restart of the daemon under a resilient subscription: it reports the loss, reconnects by itself,
    /// resumes at its last clock with nothing lost or repeated, and a change made while the daemon was down (an
    /// app's file) arrives after the reconnection.
    @Test func aResilientSubscriptionResumesAcrossARestart() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.cleanup() }
        try await daemon.start()
        let client = try await daemon.connect()
        try await client.ok("set", ["scene": J.string("s"), "path": #"[{"value":1}]"#])

        let subscription = ResilientSubscription(
            socketPath: daemon.socketPath, patterns: ["s"],
            backoff: ReconnectBackoff(initial: .milliseconds(20), maximum: .milliseconds(200)))
        var events = subscription.makeAsyncIterator()
        var seen: [String] = []
        func next() async throws -> SceneSyncEvent {
            let event = try #require(try await events.next(), "the subscription ended")
            seen.append("\(event)")
            return event
        }
        while true { if case .synced = try await next() { break } }

        #expect(try await daemon.stop() == 0)
        try daemon.writeScene("s", "[2]")
        try await daemon.start()
        var resumed: Clock?? = nil
        var change: ChangeRecord? = nil
        while change == nil {
            switch try await next() {
            case .reconnected(let clock): resumed = .some(clock)
            case .change(let record): change = record
            default: break
            }
        }
        #expect(seen.contains { $0.hasPrefix("disconnected") }, "\(seen)")
        var resumedAtItsClock = false
        if case .some(.some) = resumed { resumedAtItsClock = true }
        #expect(resumedAtItsClock, "not resumed at its clock: \(seen)")
        #expect(change?.version == 2)
        #expect(change?.origin.source == .file)
        #expect(!seen.contains { $0.hasPrefix("resync") }, "a clean restart needs no resync: \(seen)")
    }

    /// A consumer that stops reading holds at most `maxBufferedEvents` in the client; the subscription drops its
    /// connection instead of growing, and once the consumer reads again it gets every change, in order, exactly once.
    @Test func aResilientSubscriptionsSlowConsumerIsBoundedAndLosesNothing() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.cleanup() }
        try await daemon.start()
        let subscription = ResilientSubscription(
            socketPath: daemon.socketPath, patterns: ["s"],
            backoff: ReconnectBackoff(initial: .milliseconds(20), maximum: .milliseconds(100)), maxBufferedEvents: 50)
        var events = subscription.makeAsyncIterator()
        guard case .synced? = try await events.next() else {
            Issue.record("no synced first")
            return
        }
        // 300 changes while the consumer reads nothing.
        try await SceneSyncConnection.withConnection(to: daemon.socketPath) { connection in
            for value in 1...300 {
                _ = try await connection.set("s", path: [try Element(tag: nil, json: Array("\(value)".utf8))])
            }
        }
        var versions: [UInt64] = []
        var reconnections = 0
        while versions.last != 300 {
            switch try #require(try await events.next(), "the subscription ended") {
            case .change(let record): versions.append(record.version)
            case .reconnected(let resumedAt):
                #expect(resumedAt != nil, "resumed without its clock")
                reconnections += 1
            default: break
            }
        }
        #expect(versions == Array(1...300), "a change was lost or repeated")
        #expect(reconnections >= 1, "the client held all 300 events instead of 50")
    }
}
