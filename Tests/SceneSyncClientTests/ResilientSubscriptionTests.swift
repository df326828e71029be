import SceneSyncClient
import SceneSyncCore
import Testing

/// Reconnection and resumption against a fake daemon that "restarts" between connections.
@Suite struct ResilientSubscriptionTests {
    let fast = ReconnectBackoff(initial: .milliseconds(5), maximum: .milliseconds(20), jitter: 0)

    static func change(_ revision: Int, epoch: String = "e") -> String {
        #"{"event":"change","subscription":1,"epoch":"\#(epoch)","revision":\#(revision),"scene":"a","kind":"set","version":\#(revision),"format":"array","path":[{"value":\#(revision)}],"origin":{"source":"file"}}"#
            + "\n"
    }

    static func state(_ version: Int) -> String {
        #"{"event":"state","subscription":1,"scene":"a","version":\#(version),"created":1,"modified":\#(version),"format":"array","path":[]}"#
            + "\n"
    }

    static func synced(_ revision: Int, epoch: String = "e") -> String {
        #"{"event":"synced","subscription":1,"epoch":"\#(epoch)","revision":\#(revision)}"# + "\n"
    }

    static func subscribed(_ request: JSONValue) -> String {
        #"{"id":\#(request.requestID),"ok":true,"subscription":1,"epoch":"e","revision":0}"# + "\n"
    }

    /// Reads the `hello` every connection starts with and answers it as daemon process `pid`.
    static func hello(_ peer: FakePeer, pid: Int = 1) throws {
        let request = try peer.readRequest()
        #expect(request["op"]?.stringValue == "hello")
        peer.send(
            #"{"id":\#(request.requestID),"ok":true,"server":"scenesyncd","version":"0","protocol":1,"pid":\#(pid),"epoch":"e","revision":0}"#
                + "\n")
    }

    /// Collects events until `last` (inclusive), then stops by leaving the loop. Gives up after two minutes, so a
    /// client that never delivers fails the test instead of hanging it.
    func collect(
        _ subscription: ResilientSubscription, until last: @escaping @Sendable (SceneSyncEvent) -> Bool
    ) async throws -> [SceneSyncEvent] {
        try await withThrowingTaskGroup(of: [SceneSyncEvent]?.self) { group in
            group.addTask {
                var events: [SceneSyncEvent] = []
                for try await event in subscription {
                    events.append(event)
                    if last(event) { break }
                }
                return events
            }
            group.addTask {
                try await Task.sleep(for: .seconds(120))
                return nil
            }
            defer { group.cancelAll() }
            guard let events = try await group.next() ?? nil else {
                Issue.record("no matching event within two minutes")
                return []
            }
            return events
        }
    }

    @Test func resumesAfterTheLastClockAndReportsResyncs() async throws {
        let fake = try FakeDaemon()
        defer { fake.stop() }
        fake.serve([
            { peer in
                try Self.hello(peer)
                let request = try peer.readRequest()
                #expect(request["since"] == nil)
                peer.send(Self.subscribed(request) + Self.state(3) + Self.synced(3) + Self.change(4))
            },
            { peer in
                try Self.hello(peer)
                let request = try peer.readRequest()
                #expect(
                    request["since"]
                        == .object(JSONObject([("epoch", .string("e")), ("revision", .number(JSONNumber(UInt64(4))))])))
                peer.send(Self.subscribed(request) + Self.change(5) + Self.synced(5) + #"{"event":"shutdown"}"# + "\n")
            },
            { peer in
                try Self.hello(peer, pid: 2)
                let request = try peer.readRequest()
                #expect(request["since"]?["revision"]?.uint64Value == 5)
                peer.send(
                    Self.subscribed(request) + #"{"event":"resync","subscription":1,"reason":"epoch"}"# + "\n"
                        + Self.state(1) + Self.synced(6, epoch: "e2"))
                peer.waitForClose()
            },
        ])
        let events = try await collect(ResilientSubscription(socketPath: fake.path, backoff: fast)) {
            $0 == .synced(Clock(epoch: "e2", revision: 6))
        }
        #expect(fake.failures.all.isEmpty)
        let names = events.map { event -> String in
            switch event {
            case .state: "state"
            case .synced(let clock): "synced \(clock)"
            case .change(let record): "change \(record.clock.revision)"
            case .disconnected: "disconnected"
            case .reconnected(let clock): "reconnected \(clock.map(\.description) ?? "-")"
            case .resync(let reason): "resync \(reason)"
            case .shutdown: "shutdown"
            default: "\(event)"
            }
        }
        #expect(
            names == [
                "state", "synced e:3", "change 4", "disconnected", "reconnected e:4", "change 5", "synced e:5",
                "shutdown", "disconnected", "reconnected -", "resync epoch", "state", "synced e2:6",
            ])
    }

    @Test func anIncompleteViewStartsOver() async throws {
        let fake = try FakeDaemon()
        defer { fake.stop() }
        fake.serve([
            { peer in
                try Self.hello(peer)
                let request = try peer.readRequest()
                peer.send(Self.subscribed(request) + Self.state(1))
            },
            { peer in
                try Self.hello(peer)
                let request = try peer.readRequest()
                #expect(request["since"] == nil)
                peer.send(Self.subscribed(request) + Self.state(2) + Self.synced(2))
                peer.waitForClose()
            },
        ])
        let events = try await collect(ResilientSubscription(socketPath: fake.path, backoff: fast)) {
            if case .synced = $0 { return true }
            return false
        }
        #expect(fake.failures.all.isEmpty)
        #expect(events.count == 6)
        #expect(
            events.dropFirst().prefix(3).map { $0 } == [
                .disconnected(reason: "the daemon closed the connection"), .reconnected(resumedAt: nil),
                .resync(.interrupted),
            ])
        #expect(events.last == .synced(Clock(epoch: "e", revision: 2)))
    }

    @Test func waitsForTheDaemonOrNot() async throws {
        let fake = try FakeDaemon()
        defer { fake.stop() }
        let missing = fake.directory + "/missing.sock"
        do {
            _ = try await collect(ResilientSubscription(socketPath: missing, waitsForDaemon: false)) { _ in true }
            Issue.record("no error")
        } catch let error as SceneSyncConnectionError {
            guard case .noDaemon = error else {
                Issue.record("\(error)")
                return
            }
        }
    }

    @Test func aRefusedSubscriptionEndsTheSequence() async throws {
        let fake = try FakeDaemon()
        defer { fake.stop() }
        fake.serve([
            { peer in
                try Self.hello(peer)
                let request = try peer.readRequest()
                peer.send(
                    #"{"id":\#(request.requestID),"ok":false,"error":{"code":"bad_request","message":"bad pattern"}}"#
                        + "\n")
                peer.waitForClose()
            }
        ])
        await #expect(throws: SceneSyncError(.badRequest, "bad pattern")) {
            _ = try await collect(ResilientSubscription(socketPath: fake.path, backoff: fast)) { _ in true }
        }
    }

    @Test func cancellingTheConsumerStopsIt() async throws {
        let fake = try FakeDaemon()
        defer { fake.stop() }
        fake.serve([
            { peer in
                try Self.hello(peer)
                let request = try peer.readRequest()
                peer.send(Self.subscribed(request) + Self.synced(1))
                peer.waitForClose()
            }
        ])
        let subscription = ResilientSubscription(socketPath: fake.path, backoff: fast)
        let (seen, sawEvent) = AsyncStream.makeStream(of: Void.self)
        let consumer = Task {
            var count = 0
            for try await _ in subscription {
                count += 1
                sawEvent.yield()
            }
            return count
        }
        // The fake holds the connection open after `synced`; only cancellation can end the loop.
        var iterator = seen.makeAsyncIterator()
        await iterator.next()
        consumer.cancel()
        #expect(try await consumer.value == 1)
    }

    @Test func aDaemonThatIsShuttingDownIsNotResubscribedTo() async throws {
        let fake = try FakeDaemon()
        defer { fake.stop() }
        fake.serve([
            { peer in
                try Self.hello(peer, pid: 1)
                let request = try peer.readRequest()
                peer.send(Self.subscribed(request) + Self.synced(1) + #"{"event":"shutdown"}"# + "\n")
            },
            { peer in
                // Still the old process, still accepting while it stops: the client must leave without subscribing.
                try Self.hello(peer, pid: 1)
                peer.waitForClose()
            },
            { peer in
                try Self.hello(peer, pid: 2)
                let request = try peer.readRequest()
                #expect(request["op"]?.stringValue == "subscribe")
                #expect(request["since"]?["revision"]?.uint64Value == 1)
                peer.send(Self.subscribed(request) + Self.synced(1))
                peer.waitForClose()
            },
        ])
        let count = Counter()
        let events = try await collect(ResilientSubscription(socketPath: fake.path, backoff: fast)) { _ in
            count.next() == 5
        }
        #expect(
            events == [
                .synced(Clock(epoch: "e", revision: 1)), .shutdown,
                .disconnected(reason: "the daemon closed the connection"),
                .reconnected(resumedAt: Clock(epoch: "e", revision: 1)), .synced(Clock(epoch: "e", revision: 1)),
            ])
        #expect(fake.failures.all.isEmpty)
    }
}
