import SceneSyncCore
import Testing

@testable import SceneSyncClient

/// Every event of §6, shaped as the daemon sends it, decoded.
@Suite struct EventDecodingTests {
    private func event(_ text: String) throws -> SceneSyncEvent {
        try SceneSyncEvent(json: JSONParser.parse(Array(text.utf8)))
    }

    private func json(_ text: String) throws -> JSONValue {
        try JSONParser.parse(Array(text.utf8))
    }

    @Test func change() throws {
        let decoded = try event(
            #"""
            {"event":"change","subscription":1,"epoch":"e","revision":42,"scene":"s1","kind":"set","version":3,
             "format":"array","path":[{"value":"a"},{"value":"b"}],
             "origin":{"source":"client","client":"foo","uid":1000,"pid":77},
             "conflict":{"path":[{"value":"x"}],"origin":{"source":"file"}}}
            """#)
        guard case .change(let record) = decoded else {
            Issue.record("not a change: \(decoded)")
            return
        }
        #expect(record.clock == Clock(epoch: "e", revision: 42))
        #expect(record.scene.rawValue == "s1" && record.kind == .set && record.version == 3 && record.format == .array)
        #expect(record.path == [Element(tag: nil, value: .string("a")), Element(tag: nil, value: .string("b"))])
        #expect(record.origin == Origin(source: .client, client: "foo", uid: 1000, pid: 77))
        #expect(record.conflict == Conflict(path: [Element(tag: nil, value: .string("x"))], origin: .file))
    }

    @Test func delete() throws {
        let decoded = try event(
            #"{"event":"change","subscription":1,"epoch":"e","revision":43,"scene":"s1","kind":"delete","version":3,"format":"array","origin":{"source":"file"}}"#
        )
        guard case .change(let record) = decoded else {
            Issue.record("not a change: \(decoded)")
            return
        }
        #expect(record.kind == .delete && record.path == nil && record.origin == .file)
    }

    @Test func state() throws {
        let decoded = try event(
            #"{"event":"state","subscription":1,"scene":"s","version":1,"created":1,"modified":1,"format":"codable","path":[{"type":"Swift.Int","value":42}]}"#
        )
        guard case .state(let scene) = decoded else {
            Issue.record("not a state: \(decoded)")
            return
        }
        #expect(scene.id.rawValue == "s" && scene.format == .codable && scene.depth == 1)
    }

    @Test func clockEvents() throws {
        #expect(
            try event(#"{"event":"synced","subscription":1,"epoch":"e","revision":5}"#)
                == .synced(Clock(epoch: "e", revision: 5)))
        #expect(
            try event(#"{"event":"heartbeat","subscription":1,"epoch":"e","revision":6}"#)
                == .heartbeat(Clock(epoch: "e", revision: 6)))
    }

    @Test func resync() throws {
        for (name, reason) in [
            ("epoch", SceneSyncEvent.ResyncReason.epoch), ("compacted", .compacted), ("lagged", .lagged),
            ("something-new", .other("something-new")),
        ] {
            #expect(try event(#"{"event":"resync","subscription":1,"reason":"\#(name)"}"#) == .resync(reason))
            #expect(reason.rawValue == name)
        }
    }

    @Test func phaseSnapshotWarningShutdown() throws {
        #expect(
            try event(#"{"event":"phase","subscription":1,"scene":"s","phase":"background"}"#)
                == .phase(scene: try #require(SceneID("s")), phase: .background))
        #expect(
            try event(#"{"event":"snapshot","subscription":1,"path":"/p","revision":9,"reason":"phase"}"#)
                == .snapshot(.init(path: "/p", revision: 9, reason: "phase")))
        for code in WarningCode.allCases {
            let decoded = try event(
                #"{"event":"warning","subscription":1,"code":"\#(code.rawValue)","message":"m","scene":"s","file":"/d/s.json"}"#
            )
            #expect(decoded == .warning(.init(code: code.rawValue, message: "m", scene: "s", file: "/d/s.json")))
            if case .warning(let warning) = decoded { #expect(warning.knownCode == code) }
        }
        #expect(
            try event(#"{"event":"warning","subscription":1,"code":"rescanned","message":"m"}"#)
                == .warning(.init(code: "rescanned", message: "m")))
        #expect(try event(#"{"event":"shutdown"}"#) == .shutdown)
    }

    @Test func unknownEventsArePassedOn() throws {
        let text = #"{"event":"future","subscription":1,"x":1}"#
        #expect(try event(text) == .unknown(name: "future", try json(text)))
    }

    @Test func malformedKnownEventsAreViolations() throws {
        #expect(throws: SceneSyncConnectionError.self) { try event(#"{"event":"synced","epoch":"e"}"#) }
        #expect(throws: SceneSyncConnectionError.self) { try event(#"{"event":"change","revision":1}"#) }
        #expect(throws: SceneSyncConnectionError.self) {
            try event(#"{"event":"phase","scene":"s","phase":"sleeping"}"#)
        }
        #expect(throws: SceneSyncConnectionError.self) { try event(#"{"event":7}"#) }
    }

    @Test func clientSideEventsHaveJSONOfTheSameShape() throws {
        #expect(
            SceneSyncEvent.disconnected(reason: "gone").clientSideJSON
                == (try json(#"{"event":"disconnected","reason":"gone"}"#)))
        #expect(
            SceneSyncEvent.reconnected(resumedAt: Clock(epoch: "e", revision: 4)).clientSideJSON
                == (try json(#"{"event":"reconnected","resumed_at":{"epoch":"e","revision":4}}"#)))
        #expect(
            SceneSyncEvent.reconnected(resumedAt: nil).clientSideJSON
                == (try json(#"{"event":"reconnected","resumed_at":null}"#)))
        #expect(
            SceneSyncEvent.resync(.interrupted).clientSideJSON
                == (try json(#"{"event":"resync","reason":"interrupted"}"#)))
    }
}
