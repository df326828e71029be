import SceneSyncClient
import SceneSyncCore
import Testing

/// The typed answers, from responses shaped exactly as the daemon writes them.
@Suite struct ResponseDecodingTests {
    private func json(_ text: String) throws -> JSONValue {
        try JSONParser.parse(Array(text.utf8))
    }

    @Test func hello() throws {
        let info = try ServerInfo(
            response: json(
                #"{"id":1,"ok":true,"server":"scenesyncd","version":"0.1.0","protocol":1,"pid":4242,"epoch":"e","revision":9}"#
            ))
        #expect(
            info
                == ServerInfo(
                    server: "scenesyncd", version: "0.1.0", protocolVersion: 1, pid: 4242,
                    clock: Clock(epoch: "e", revision: 9)))
    }

    @Test func list() throws {
        let list = try SceneList(
            response: json(
                #"{"id":1,"ok":true,"epoch":"e","revision":5,"scenes":[{"scene":"a","version":2,"modified":5,"depth":3},{"scene":"b","version":1,"modified":1,"depth":0}]}"#
            ))
        #expect(list.clock == Clock(epoch: "e", revision: 5))
        #expect(list.scenes.map(\.scene.rawValue) == ["a", "b"])
        #expect(list.scenes[0] == SceneList.Entry(scene: try #require(SceneID("a")), version: 2, modified: 5, depth: 3))
    }

    @Test func get() throws {
        let fetched = try FetchedScene(
            response: json(
                #"{"id":1,"ok":true,"scene":"s","version":3,"created":1,"modified":4,"format":"codable","path":[{"type":"Swift.Int","value":42}],"epoch":"e","revision":4}"#
            ))
        #expect(fetched.clock == Clock(epoch: "e", revision: 4))
        #expect(fetched.scene.id.rawValue == "s")
        #expect(fetched.scene.version == 3)
        #expect(fetched.scene.created == 1)
        #expect(fetched.scene.modified == 4)
        #expect(fetched.scene.format == .codable)
        #expect(fetched.scene.path == [Element(tag: "Swift.Int", value: try json("42"))])
    }

    @Test func changeAndSnapshot() throws {
        #expect(
            try ChangeResult(response: json(#"{"id":1,"ok":true,"scene":"s","version":2,"revision":8}"#))
                == ChangeResult(scene: try #require(SceneID("s")), version: 2, revision: 8))
        #expect(
            try SnapshotInfo(
                response: json(#"{"id":1,"ok":true,"path":"/s/snapshot-1.json","revision":8,"scenes":2,"bytes":300}"#))
                == SnapshotInfo(path: "/s/snapshot-1.json", revision: 8, scenes: 2, bytes: 300))
    }

    @Test func stats() throws {
        let text = #"""
            {"id":1,"ok":true,"epoch":"e","revision":8,"scenes":2,"clients":1,"subscribers":0,"uptime_s":61,
             "events_sent":10,"events_dropped":1,"lagged":0,"file_errors":3,"snapshots":1,
             "last_snapshot":{"path":"/p","revision":7,"time":"2026-01-01T00:00:00Z","reason":"signal"},"rss_bytes":1048576}
            """#
        let stats = try DaemonStats(response: json(text))
        #expect(stats.clock == Clock(epoch: "e", revision: 8))
        #expect(stats.scenes == 2 && stats.clients == 1 && stats.subscribers == 0 && stats.uptimeSeconds == 61)
        #expect(stats.eventsSent == 10 && stats.eventsDropped == 1 && stats.lagged == 0 && stats.fileErrors == 3)
        #expect(stats.snapshots == 1 && stats.rssBytes == 1_048_576)
        #expect(
            stats.lastSnapshot
                == DaemonStats.LastSnapshot(path: "/p", revision: 7, time: "2026-01-01T00:00:00Z", reason: "signal"))
        let none = try DaemonStats(response: json(text.replacingLastSnapshotWithNull()))
        #expect(none.lastSnapshot == nil)
    }

    @Test func missingFieldsAreProtocolViolations() throws {
        #expect(throws: SceneSyncConnectionError.self) {
            try ChangeResult(response: json(#"{"id":1,"ok":true,"scene":"s","version":2}"#))
        }
        #expect(throws: SceneSyncConnectionError.self) {
            try SceneList(response: json(#"{"id":1,"ok":true,"epoch":"e","revision":5}"#))
        }
        #expect(throws: SceneSyncConnectionError.self) {
            try FetchedScene(response: json(#"{"id":1,"ok":true,"scene":"bad/id","epoch":"e","revision":5}"#))
        }
    }
}

extension String {
    fileprivate func replacingLastSnapshotWithNull() -> String {
        guard let start = range(of: #""last_snapshot":{"#), let end = self[start.upperBound...].firstIndex(of: "}")
        else { return self }
        return String(self[..<start.lowerBound]) + #""last_snapshot":null"# + String(self[index(after: end)...])
    }
}
