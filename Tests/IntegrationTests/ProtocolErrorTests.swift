import Foundation
import SceneSyncCore
import Testing

/// The line protocol itself (§6): framing, ids, ordering, half-close, and every error code over the real socket.
@Suite struct ProtocolErrorTests {
    static func start(config: String? = nil) async throws -> (DaemonProcess, SocketClient) {
        let daemon = try DaemonProcess(config: config)
        try await daemon.start()
        return (daemon, try await daemon.connect())
    }

    /// Sends `line` and returns the one response it gets.
    static func answer(_ client: SocketClient, _ line: String) async throws -> JSONValue {
        try await client.send(raw: line + "\n")
        return try await client.readMessage()
    }

    // MARK: - bad_request, unknown_op, invalid_scene

    @Test func linesThatAreNotRequestsAreBadRequestsWithANullID() async throws {
        let (daemon, client) = try await Self.start()
        defer { daemon.cleanup() }
        let nested = String(repeating: "[", count: 300) + String(repeating: "]", count: 300)
        let deepObject = #"{"id":1,"op":"get","x":"# + nested + "}"
        for line in ["not json", "[1,2]", "42", #""op""#, "null", #"{"id":1,"op":"hello""#, nested, deepObject] {
            let response = try await Self.answer(client, line)
            #expect(response["id"] == .null, "\(line.prefix(40))")
            #expect(response["ok"]?.boolValue == false)
            #expect(response.errorCode == "bad_request", "\(line.prefix(40))")
            #expect(response["error"]?["message"]?.stringValue?.isEmpty == false)
        }
        // The connection stays open.
        #expect(try await client.ok("hello")["server"]?.stringValue == "scenesyncd")
    }

    @Test func malformedRequestsKeepTheirID() async throws {
        let (daemon, client) = try await Self.start()
        defer { daemon.cleanup() }
        try await client.ok("set", ["scene": J.string("codable"), "path": #"[{"type":"A.b","value":1}]"#])
        let cases: [(String, String)] = [
            (#"{"id":"no-op"}"#, #""no-op""#),
            (#"{"id":7,"op":42}"#, "7"),
            (#"{"id":8,"op":"get"}"#, "8"),
            (#"{"id":9,"op":"set","scene":"s"}"#, "9"),
            (#"{"id":10,"op":"set","scene":"s","path":{"value":1}}"#, "10"),
            (#"{"id":11,"op":"set","scene":"s","path":[{"type":"A.b","value":1},{"value":2}]}"#, "11"),
            (#"{"id":12,"op":"push","scene":"codable","elements":[{"value":2}]}"#, "12"),
            (#"{"id":13,"op":"push","scene":"s","elements":[]}"#, "13"),
            (#"{"id":14,"op":"pop","scene":"codable","count":-1}"#, "14"),
            (#"{"id":15,"op":"pop","scene":"codable","count":1,"to_root":true}"#, "15"),
            (#"{"id":16,"op":"subscribe","scenes":"*"}"#, "16"),
            (#"{"id":17,"op":"subscribe","since":{"epoch":1}}"#, "17"),
            (#"{"id":18,"op":"set","scene":"s","path":[],"if_version":"1"}"#, "18"),
            (#"{"id":19,"op":"phase","scene":"s","phase":"asleep"}"#, "19"),
            (#"{"id":20,"op":"set","scene":"s","path":[{"value":1}],"format":"codable"}"#, "20"),
            (#"{"id":1.5,"op":"get"}"#, "1.5"),
            (#"{"id":null,"op":"history"}"#, "null"),
        ]
        for (line, id) in cases {
            let response = try await Self.answer(client, line)
            #expect(response["id"] == (try json(id)), "\(line)")
            #expect(response.errorCode == "bad_request", "\(line): \(response.text)")
        }
        #expect(try await Self.answer(client, #"{"id":{"a":1},"op":"hello"}"#)["id"] == .null)
        #expect(try await client.request("get", ["scene": J.string("s")]).errorCode == "not_found")
    }

    @Test func unknownOpAndInvalidScene() async throws {
        let (daemon, client) = try await Self.start()
        defer { daemon.cleanup() }
        let unknown = try await Self.answer(client, #"{"id":"u","op":"teleport"}"#)
        #expect(unknown["id"]?.stringValue == "u")
        #expect(unknown.errorCode == "unknown_op")
        for scene in ["", "bad/id", ".hidden", "-dash", "x.json", "sp ace", String(repeating: "a", count: 129), "é"] {
            for op in ["get", "set", "history"] {
                var fields = ["scene": J.string(scene)]
                if op == "set" { fields["path"] = "[]" }
                #expect(try await client.request(op, fields).errorCode == "invalid_scene", "\(op) \(scene)")
            }
        }
        #expect(try await client.ok("set", ["scene": J.string(String(repeating: "a", count: 128)), "path": "[]"]).isOK)
        #expect(try await client.ok("list")["scenes"]?.arrayValue?.count == 1)
    }

    // MARK: - not_found, conflict, out_of_range, too_large

    @Test func sceneErrors() async throws {
        let (daemon, client) = try await Self.start(config: "scenes: {max_file_bytes: 100, max_depth: 3}\n")
        defer { daemon.cleanup() }
        let scene = J.string("s")
        #expect(try await client.request("get", ["scene": scene]).errorCode == "not_found")
        #expect(try await client.request("pop", ["scene": scene]).errorCode == "not_found")
        #expect(try await client.request("delete", ["scene": scene]).errorCode == "not_found")
        try await client.ok("set", ["scene": scene, "path": #"[{"value":1},{"value":2}]"#])
        let revision = try await client.sync()

        let conflict = try await client.request("delete", ["scene": scene, "if_version": "7"])
        #expect(conflict.errorCode == "conflict")
        #expect(conflict["error"]?["current"]?["version"]?.uint64Value == 1)

        let outOfRange = try await client.request("pop", ["scene": scene, "count": "3"])
        #expect(outOfRange.errorCode == "out_of_range")
        #expect(try await client.ok("pop", ["scene": scene, "count": "0"])["version"]?.uint64Value == 1)

        let big = String(repeating: "x", count: 100)
        let tooLarge = try await client.request("set", ["scene": scene, "path": #"[{"value":"\#(big)"}]"#])
        #expect(tooLarge.errorCode == "too_large")
        let tooDeep = try await client.request("push", ["scene": scene, "elements": #"[{"value":3},{"value":4}]"#])
        #expect(tooDeep.errorCode == "too_large")
        let tooLargeNew = try await client.request(
            "push", ["scene": J.string("n"), "elements": #"[{"value":"\#(big)"}]"#])
        #expect(tooLargeNew.errorCode == "too_large")

        #expect(try await client.sync() == revision, "a refused change changed something")
        #expect(daemon.readScene("s") == "[1,2]")
        #expect(daemon.readScene("n") == nil)
        #expect(
            try await client.ok("push", ["scene": scene, "elements": #"[{"value":3}]"#])["version"]?.uint64Value == 2)
    }

    @Test func overlongLineIsTooLargeThenClosed() async throws {
        let (daemon, client) = try await Self.start(config: "socket: {max_line_bytes: 1024}\n")
        defer { daemon.cleanup() }
        // Exactly the limit is still a line.
        let fits = #"{"id":1,"op":"hello","client":"\#(String(repeating: "c", count: 991))"}"#
        #expect(fits.utf8.count == 1024)
        #expect(try await Self.answer(client, fits).isOK)
        let oneOver = try await daemon.connect()
        let refusedAtOnce = try await Self.answer(oneOver, #"{"id":1,"op":"hello","client":"c\#(fits.dropFirst(31))"#)
        #expect(refusedAtOnce.errorCode == "too_large")
        #expect(await oneOver.isClosedByPeer())

        try await client.send(raw: #"{"id":2,"op":"hello"}"# + "\n" + #"{"id":3,"op":"get","scene":""#)
        try await client.send(raw: String(repeating: "x", count: 2000) + "\"}\n")
        let earlier = try await client.readMessage()
        #expect(earlier["id"]?.uint64Value == 2)
        let refused = try await client.readMessage()
        #expect(refused["id"] == .null)
        #expect(refused.errorCode == "too_large")
        #expect(await client.isClosedByPeer())
        // The daemon itself carries on.
        #expect(try await daemon.connect().ok("hello").isOK)
    }

    // MARK: - forbidden

    /// Writes need root, the daemon's own user, or `access.write_uids`/`write_gids`; reads are open to anyone who
    /// can open the socket.
    @Test func otherUsersMayReadButNotWrite() async throws {
        try #require(getuid() == 0, "needs root to run a client as nobody")
        let (daemon, client) = try await Self.start(config: "socket: {mode: \"0666\"}\n")
        defer { daemon.cleanup() }
        try #require(chmod(daemon.root.path, 0o755) == 0)
        try await client.ok("set", ["scene": J.string("s"), "path": "[]"])

        let reads = [
            #"{"id":1,"op":"hello"}"#, #"{"id":2,"op":"list"}"#, #"{"id":3,"op":"get","scene":"s"}"#,
            #"{"id":4,"op":"history","scene":"s"}"#, #"{"id":5,"op":"sync"}"#, #"{"id":6,"op":"stats"}"#,
            #"{"id":7,"op":"subscribe","initial":false}"#, #"{"id":8,"op":"unsubscribe","subscription":999}"#,
        ]
        let writes = [
            #"{"id":11,"op":"set","scene":"s","path":[{"value":1}]}"#,
            #"{"id":12,"op":"push","scene":"s","elements":[{"value":1}]}"#, #"{"id":13,"op":"pop","scene":"s"}"#,
            #"{"id":14,"op":"delete","scene":"s"}"#, #"{"id":15,"op":"phase","scene":"s","phase":"background"}"#,
            #"{"id":16,"op":"snapshot"}"#, #"{"id":17,"op":"reload"}"#,
        ]
        let answers = try await exchangeAsNobody(socket: daemon.socketPath, requests: reads + writes)
        let responses = answers.filter { $0["event"] == nil }
        #expect(responses.count == reads.count + writes.count)
        for response in responses {
            let id = try #require(response["id"]?.uint64Value)
            if id < 8 {
                #expect(response.isOK, "read \(id) as nobody: \(response.text)")
            } else if id == 8 {
                #expect(response.errorCode == "not_found", "unsubscribe as nobody: \(response.text)")
            } else if id > 10 {
                #expect(response.errorCode == "forbidden", "write \(id) as nobody: \(response.text)")
            }
        }
        #expect(try await client.scene("s")["version"]?.uint64Value == 1)
        #expect(daemon.snapshotFiles().isEmpty)
    }

    /// nobody (uid and gid 65534) may write once listed by uid or by gid.
    @Test(arguments: ["write_uids", "write_gids"])
    func listedUsersMayWrite(key: String) async throws {
        try #require(getuid() == 0, "needs root to run a client as nobody")
        let (daemon, client) = try await Self.start(config: "socket: {mode: \"0666\"}\naccess: {\(key): [65534]}\n")
        defer { daemon.cleanup() }
        try #require(chmod(daemon.root.path, 0o755) == 0)
        let answers = try await exchangeAsNobody(
            socket: daemon.socketPath,
            requests: [#"{"id":1,"op":"set","scene":"s","path":[{"value":1}]}"#])
        #expect(answers.first?.isOK == true, "\(answers.map(\.text))")
        let change = try #require(
            try await client.ok("history", ["scene": J.string("s")])["records"]?.arrayValue?.first)
        #expect(change["origin"]?["uid"]?.uint64Value == 65534)
    }

    // MARK: - unavailable

    @Test func clientsBeyondMaxClientsAreTurnedAway() async throws {
        let (daemon, first) = try await Self.start(config: "socket: {max_clients: 2}\n")
        defer { daemon.cleanup() }
        #expect(try await first.ok("hello").isOK)
        let second = try await daemon.connect()
        #expect(try await second.ok("hello").isOK)

        let third = try await daemon.connect()
        let refusal = try await third.readMessage()
        #expect(refusal["id"] == .null)
        #expect(refusal.errorCode == "unavailable")
        #expect(await third.isClosedByPeer())

        // A place frees up when a client leaves; the daemon notices the close on its own time, so keep knocking.
        second.close()
        let admitted = await eventually {
            // A knock that comes too early is turned away (and may find the socket closed already): try again.
            guard let next = try? await daemon.connect() else { return false }
            return (try? await Self.answer(next, #"{"id":1,"op":"hello"}"#))?.isOK == true
        }
        #expect(admitted)
    }

    @Test func unwritableSceneFileIsUnavailableAndChangesNothing() async throws {
        let (daemon, client) = try await Self.start()
        defer { daemon.cleanup() }
        try await client.subscribe()
        let revision = try await client.sync()
        try FileManager.default.createDirectory(at: daemon.sceneFile("x"), withIntermediateDirectories: false)

        let refused = try await client.request("set", ["scene": J.string("x"), "path": #"[{"value":1}]"#])
        #expect(refused.errorCode == "unavailable", "\(refused.text)")
        #expect(try await client.request("get", ["scene": J.string("x")]).errorCode == "not_found")
        #expect(try await client.sync() == revision)
        #expect(client.takeEvents().named("change").isEmpty)
        #expect(FileManager.default.fileExists(atPath: daemon.sceneFile("x").path))
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: daemon.scenes.path).filter {
            $0 != "x.json"
        }
        #expect(leftovers.isEmpty, "temp files left behind: \(leftovers)")
    }

    // MARK: - Framing

    @Test func blankLinesCarriageReturnsAndMissingIDs() async throws {
        let (daemon, client) = try await Self.start()
        defer { daemon.cleanup() }
        try await client.send(raw: "\n   \n\t\r\n" + #"{"id":1,"op":"hello"}"# + "\r\n" + #"{"op":"hello"}"# + "\n\n")
        let first = try await client.readMessage()
        #expect(first["id"]?.uint64Value == 1)
        #expect(first.isOK)
        let second = try await client.readMessage()
        #expect(second["id"] == .null)
        #expect(second.isOK)
        // Nothing else was answered: the next response is for the next request.
        #expect(try await client.ok("list")["scenes"] == .array([]))
    }

    @Test func halfCloseGetsEveryAnswerThenEOF() async throws {
        let (daemon, client) = try await Self.start()
        defer { daemon.cleanup() }
        let requests = [
            #"{"id":1,"op":"set","scene":"a","path":[{"value":1}]}"#, #"{"id":2,"op":"sync"}"#,
            #"{"id":3,"op":"snapshot"}"#, #"{"id":4,"op":"get","scene":"a"}"#,
        ]
        // The last line has no newline: at EOF it is still a line.
        try await client.send(raw: requests.joined(separator: "\n"))
        client.finishSending()
        var ids: [UInt64] = []
        while let line = try? await client.readLine() {
            let message = try json(line)
            #expect(message.isOK, "\(line)")
            ids.append(try #require(message["id"]?.uint64Value))
        }
        #expect(ids == [1, 2, 3, 4])
        #expect(await client.isClosedByPeer())
    }

    /// Answers far larger than the socket buffers, asked for right before a half-close, all arrive: the daemon
    /// closes the connection only once the socket has taken its last byte.
    @Test func halfCloseGetsEveryLargeAnswer() async throws {
        let (daemon, client) = try await Self.start()
        defer { daemon.cleanup() }
        let big = J.string(String(repeating: "x", count: 60_000))
        var lines = [#"{"id":0,"op":"set","scene":"big","path":[{"value":\#(big)}]}"#]
        for id in 1...40 { lines.append(#"{"id":\#(id),"op":"get","scene":"big"}"#) }
        try await client.send(raw: lines.joined(separator: "\n") + "\n")
        client.finishSending()
        // Every answer, then the daemon's close: only EOF ends the loop, so a timeout or a reset fails the test.
        var ids: [UInt64] = []
        while true {
            let line: String
            do {
                line = try await client.readLine("answer \(ids.count) of 41, or the daemon's close")
            } catch SocketClient.ClientError.closed {
                break
            }
            let message = try json(line)
            #expect(message.isOK, "\(line.prefix(200))")
            ids.append(try #require(message["id"]?.uint64Value))
        }
        #expect(ids == Array(0...40))
    }

    /// Pipelined requests are answered in order, slow ones (a sync barrier, a snapshot) included.
    @Test func pipelinedResponsesComeInRequestOrder() async throws {
        let (daemon, client) = try await Self.start()
        defer { daemon.cleanup() }
        var lines: [String] = []
        for n in 0..<60 {
            switch n % 5 {
            case 0: lines.append(#"{"id":\#(n),"op":"sync"}"#)
            case 1: lines.append(#"{"id":\#(n),"op":"push","scene":"p","elements":[{"value":\#(n)}]}"#)
            case 2: lines.append(#"{"id":\#(n),"op":"get","scene":"p"}"#)
            case 3: lines.append(#"{"id":\#(n),"op":"snapshot"}"#)
            default: lines.append(#"{"id":\#(n),"op":"nonsense"}"#)
            }
        }
        try await client.send(raw: lines.joined(separator: "\n") + "\n")
        var ids: [UInt64] = []
        for _ in lines { ids.append(try #require(try await client.readMessage()["id"]?.uint64Value)) }
        #expect(ids == Array(0..<60))
    }
}
