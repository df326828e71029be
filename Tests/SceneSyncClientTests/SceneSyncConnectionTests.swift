import Foundation
import SceneSyncClient
import SceneSyncCore
import Testing

/// The connection against a scripted fake daemon: id matching, pipelining, errors, event routing, framing.
@Suite struct SceneSyncConnectionTests {
    let stats = #""epoch":"e","revision":1"#

    @Test func pipelinedAnswersAreMatchedByID() async throws {
        let fake = try FakeDaemon()
        defer { fake.stop() }
        fake.serve([
            { peer in
                let requests = try (0..<3).map { _ in try peer.readRequest() }
                // Answer in reverse: matching must go by id, not by position.
                for request in requests.reversed() {
                    let scene = request["scene"]?.stringValue ?? "?"
                    peer.send(
                        #"{"id":\#(request.requestID),"ok":true,"scene":"\#(scene)","version":1,"created":1,"modified":1,"format":"array","path":[{"value":"\#(scene)"}],\#(stats)}"#
                            + "\n")
                }
                peer.waitForClose()
            }
        ])
        let scenes = try await SceneSyncConnection.withConnection(to: fake.path) { connection in
            async let a = connection.get("a")
            async let b = connection.get("b")
            async let c = connection.get("c")
            return try await [a, b, c].map { $0.scene.path.first?.value.stringValue }
        }
        #expect(scenes == ["a", "b", "c"])
        #expect(fake.failures.all.isEmpty)
    }

    @Test func everyErrorCodeIsThrownTyped() async throws {
        let fake = try FakeDaemon()
        defer { fake.stop() }
        let codes = ErrorCode.allCases.filter { $0 != .conflict }
        fake.serve([
            { peer in
                for code in codes {
                    let request = try peer.readRequest()
                    peer.send(
                        #"{"id":\#(request.requestID),"ok":false,"error":{"code":"\#(code.rawValue)","message":"m \#(code.rawValue)"}}"#
                            + "\n")
                }
                let conflicted = try peer.readRequest()
                peer.send(
                    #"{"id":\#(conflicted.requestID),"ok":false,"error":{"code":"conflict","message":"version is 4","current":{"scene":"s","version":4,"created":1,"modified":9,"format":"array","path":[{"value":1}]}}}"#
                        + "\n")
                let missing = try peer.readRequest()
                peer.send(
                    #"{"id":\#(missing.requestID),"ok":false,"error":{"code":"conflict","message":"no scene","current":null}}"#
                        + "\n")
                let future = try peer.readRequest()
                peer.send(
                    #"{"id":\#(future.requestID),"ok":false,"error":{"code":"brand_new","message":"later"}}"# + "\n")
                peer.waitForClose()
            }
        ])
        try await SceneSyncConnection.withConnection(to: fake.path) { connection in
            for code in codes {
                do {
                    _ = try await connection.get("s")
                    Issue.record("no error for \(code)")
                } catch let error as SceneSyncError {
                    #expect(error.code == code)
                    #expect(error.message == "m \(code.rawValue)")
                    #expect(error.current == nil)
                }
            }
            do {
                _ = try await connection.set("s", path: [], ifVersion: 3)
                Issue.record("no conflict")
            } catch let error as SceneSyncError {
                #expect(error.code == .conflict)
                #expect(error.current?.version == 4)
                #expect(error.current?.path == [Element(tag: nil, value: .number(JSONNumber(UInt64(1))))])
            }
            do {
                _ = try await connection.delete("s", ifVersion: 1)
                Issue.record("no conflict")
            } catch let error as SceneSyncError {
                #expect(error.code == .conflict && error.current == nil)
            }
            do {
                _ = try await connection.stats()
                Issue.record("no error")
            } catch let error as SceneSyncError {
                #expect(error.code == .internal && error.message == "brand_new: later")
            }
        }
        #expect(fake.failures.all.isEmpty)
    }

    @Test func subscriptionEventsAreRoutedFromTheFirstLine() async throws {
        let fake = try FakeDaemon()
        defer { fake.stop() }
        fake.serve([
            { peer in
                let hello = try peer.readRequest()
                #expect(hello["client"]?.stringValue == "tests")
                peer.send(
                    #"{"id":\#(hello.requestID),"ok":true,"server":"scenesyncd","version":"0.1.0","protocol":1,"pid":1,\#(self.stats)}"#
                        + "\n")
                let subscribe = try peer.readRequest()
                #expect(subscribe["scenes"] == .array([.string("a*")]))
                // The answer and the first events in one write, plus an event of another subscription.
                peer.send(
                    #"{"id":\#(subscribe.requestID),"ok":true,"subscription":7,"epoch":"e","revision":1}"# + "\n"
                        + #"{"event":"state","subscription":7,"scene":"a1","version":1,"created":1,"modified":1,"format":"array","path":[]}"#
                        + "\r\n" + #"{"event":"synced","subscription":7,"epoch":"e","revision":1}"# + "\n"
                        + #"{"event":"synced","subscription":8,"epoch":"e","revision":1}"# + "\n\n  \n"
                        + #"{"event":"heartbeat","subscription":7,"epoch":"e","revision":1}"# + "\n"
                        + #"{"event":"shutdown"}"#)
                // EOF right after an unterminated last line: still a line.
            }
        ])
        let events = try await SceneSyncConnection.withConnection(to: fake.path) { connection in
            let info = try await connection.hello(client: "tests")
            #expect(info.pid == 1)
            let subscription = try await connection.subscribe(patterns: ["a*"])
            #expect(subscription.id == 7 && subscription.clock == Clock(epoch: "e", revision: 1))
            var events: [SceneSyncEvent] = []
            do {
                for try await event in subscription { events.append(event) }
                Issue.record("the subscription ended without an error")
            } catch let error as SceneSyncConnectionError {
                #expect(error == .disconnected(reason: "the daemon closed the connection"))
            }
            return events
        }
        #expect(events.count == 4)
        if case .state(let scene) = events.first {
            #expect(scene.id.rawValue == "a1")
        } else {
            Issue.record("\(events)")
        }
        #expect(events.dropFirst().first == .synced(Clock(epoch: "e", revision: 1)))
        #expect(events.dropFirst(2).first == .heartbeat(Clock(epoch: "e", revision: 1)))
        #expect(events.last == .shutdown)
        #expect(fake.failures.all.isEmpty)
    }

    @Test func anAnswerWithoutIDFailsTheOldestRequest() async throws {
        let fake = try FakeDaemon()
        defer { fake.stop() }
        fake.serve([
            { peer in
                peer.send(#"{"id":null,"ok":false,"error":{"code":"unavailable","message":"too many clients"}}"# + "\n")
            }
        ])
        await #expect(throws: SceneSyncError(.unavailable, "too many clients")) {
            try await SceneSyncConnection.withConnection(to: fake.path) { connection in
                try await connection.list()
            }
        }
    }

    @Test func garbageIsAProtocolViolation() async throws {
        let fake = try FakeDaemon()
        defer { fake.stop() }
        fake.serve([
            { peer in
                _ = try peer.readRequest()
                peer.send("HTTP/1.1 400 Bad Request\r\n")
                peer.waitForClose()
            }
        ])
        do {
            try await SceneSyncConnection.withConnection(to: fake.path) { connection in
                _ = try await connection.sync()
            }
            Issue.record("no error")
        } catch let error as SceneSyncConnectionError {
            guard case .protocolViolation = error else {
                Issue.record("\(error)")
                return
            }
        }
    }

    /// Found by the JSON parser fuzzer: a scene file may hold an item nested 256 levels (§3), which the daemon's
    /// answers and events carry a few levels deeper; the client used to refuse such lines as protocol violations.
    @Test func answersCarryingTheDeepestItemAreNotAViolation() async throws {
        let fake = try FakeDaemon()
        defer { fake.stop() }
        let deepest = String(repeating: "[", count: 256) + String(repeating: "]", count: 256)
        fake.serve([
            { peer in
                let request = try peer.readRequest()
                peer.send(
                    #"{"id":\#(request.requestID),"ok":true,"scene":"s","version":1,"created":1,"modified":1,"format":"codable","path":[{"type":"A.b","value":\#(deepest)}],\#(stats)}"#
                        + "\n")
                peer.waitForClose()
            }
        ])
        let fetched = try await SceneSyncConnection.withConnection(to: fake.path) { connection in
            try await connection.get("s")
        }
        #expect(fetched.scene.path.first?.item == Array(deepest.utf8))
    }

    @Test func aLostConnectionFailsWaitingRequests() async throws {
        let fake = try FakeDaemon()
        defer { fake.stop() }
        fake.serve([{ peer in _ = try peer.readRequest() }])
        await #expect(throws: SceneSyncConnectionError.disconnected(reason: "the daemon closed the connection")) {
            try await SceneSyncConnection.withConnection(to: fake.path) { connection in
                try await connection.reload()
            }
        }
    }

    @Test func noDaemon() async throws {
        let fake = try FakeDaemon()
        let path = fake.directory + "/missing.sock"
        defer { fake.stop() }
        do {
            try await SceneSyncConnection.withConnection(to: path) { _ in }
            Issue.record("connected to nothing")
        } catch let error as SceneSyncConnectionError {
            guard case .noDaemon(let errorPath, _) = error else {
                Issue.record("\(error)")
                return
            }
            #expect(errorPath == path)
        }
    }

    @Test func typedOpsDecodeTheirAnswers() async throws {
        let fake = try FakeDaemon()
        defer { fake.stop() }
        fake.serve([
            { peer in
                let answers = [
                    "push": #""scene":"s","version":2,"revision":5"#,
                    "pop": #""scene":"s","version":3,"revision":6"#,
                    "delete": #""revision":7"#,
                    "history":
                        #""records":[{"epoch":"e","revision":6,"scene":"s","kind":"set","version":3,"format":"array","path":[],"origin":{"source":"file"}}]"#,
                    "phase": #""snapshot":{"path":"/p","revision":7,"scenes":0,"bytes":10}"#,
                    "snapshot": #""path":"/p","revision":7,"scenes":0,"bytes":10"#,
                    "sync": #""epoch":"e","revision":7"#,
                ]
                while let request = try? peer.readRequest(timeout: .seconds(600)) {
                    let op = request["op"]?.stringValue ?? ""
                    if op == "phase", request["phase"]?.stringValue != "background" {
                        peer.send(#"{"id":\#(request.requestID),"ok":true}"# + "\n")
                        continue
                    }
                    peer.send(#"{"id":\#(request.requestID),"ok":true,\#(answers[op] ?? "")}"# + "\n")
                }
            }
        ])
        try await SceneSyncConnection.withConnection(to: fake.path) { (connection) async throws in
            #expect(try await connection.push("s", elements: [Element(tag: nil, value: .null)]).version == 2)
            #expect(try await connection.pop("s").revision == 6)
            #expect(try await connection.delete("s") == 7)
            #expect(try await connection.history("s", limit: 1).map(\.clock.revision) == [6])
            #expect(try await connection.phase("s", .active) == nil)
            #expect(try await connection.phase("s", .background)?.revision == 7)
            #expect(try await connection.snapshot().bytes == 10)
            #expect(try await connection.sync() == Clock(epoch: "e", revision: 7))
        }
    }
}
