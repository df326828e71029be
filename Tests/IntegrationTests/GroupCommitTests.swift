import Foundation
import SceneSyncCore
import Testing

/// The write path: pipelined changes are committed together, each scene written once; a scene whose
/// write fails has exactly its changes refused; the daemon's own renames are not read back, but an app's write that
/// lands right after one is.
@Suite struct GroupCommitTests {
    /// Five changes in one send reach the engine together. `x.json` is a directory, so writing that scene fails:
    /// its two changes are refused with `unavailable`, the other three are made with consecutive revisions, and
    /// every answer comes in request order.
    @Test func aFailedWriteRefusesExactlyThatScenesChanges() async throws {
        let (daemon, client) = try await ClientChangeTests.start()
        defer { daemon.cleanup() }
        let before = try await client.sync()
        let commits = try await client.testCounter("group_commits")
        try FileManager.default.createDirectory(at: daemon.sceneFile("x"), withIntermediateDirectories: false)

        let requests: [(String, [String: String])] = [
            ("set", ["scene": J.string("a"), "path": #"[{"value":1}]"#]),
            ("set", ["scene": J.string("x"), "path": #"[{"value":1}]"#]),
            ("push", ["scene": J.string("a"), "elements": #"[{"value":2}]"#]),
            ("set", ["scene": J.string("b"), "path": #"[{"value":3}]"#]),
            ("push", ["scene": J.string("x"), "elements": #"[{"value":2}]"#]),
        ]
        var batch = ""
        for (offset, (op, fields)) in requests.enumerated() {
            batch += SocketClient.line(id: 100 + offset, op, fields)
        }
        try await client.send(raw: batch)
        var answers: [JSONValue] = []
        for offset in requests.indices { answers.append(try await client.response(to: 100 + offset)) }

        #expect(answers.map(\.errorCode) == [nil, "unavailable", nil, nil, "unavailable"], "\(answers.map(\.text))")
        // They were decided together: one group commit, as the daemon counts them.
        #expect(try await client.testCounter("group_commits") == commits + 1)
        #expect(answers[0].revision == before + 1)
        #expect(answers[2].revision == before + 2)
        #expect(answers[2]["version"]?.uint64Value == 2)
        #expect(answers[3].revision == before + 3)

        #expect(try await client.sync() == before + 3)
        let changes = client.takeEvents().named("change")
        #expect(changes.map(\.revision) == [before + 1, before + 2, before + 3], "\(changes.map(\.text))")
        #expect(changes.map { $0["scene"]?.stringValue } == ["a", "a", "b"])
        #expect(daemon.readScene("a") == "[1,2]")
        #expect(daemon.readScene("b") == "[3]")
        #expect(try await client.request("get", ["scene": J.string("x")]).errorCode == "not_found")
    }

    /// The daemon's own write is not read back as a change, and an app's write that replaces the file right after
    /// it (here: as soon as the answer arrives) is still merged, with the app's content and its own revision.
    @Test func anAppWriteRightAfterTheDaemonsRenameIsSeen() async throws {
        let (daemon, client) = try await ClientChangeTests.start()
        defer { daemon.cleanup() }
        for round in 1...20 {
            let response = try await client.ok("set", ["scene": J.string("s"), "path": "[{\"value\":\(round)}]"])
            let revision = try #require(response.revision)
            // The app replaces the file atomically, as apps do, as soon as the daemon answered.
            let temp = daemon.scenes.appendingPathComponent(".s.json.app")
            try Data("[\(round),\(round)]".utf8).write(to: temp)
            try #require(rename(temp.path, daemon.sceneFile("s").path) == 0)

            #expect(try await client.sync() == revision + 1)
            let changes = client.takeEvents().named("change")
            #expect(changes.count == 2, "round \(round): \(changes.map(\.text))")
            #expect(changes.last?["origin"]?["source"]?.stringValue == "file")
            #expect(changes.last?["path"] == (try json("[{\"value\":\(round)},{\"value\":\(round)}]")))
        }
    }
}
