import Foundation
import SceneSyncCore
import Testing

/// Replication across hosts through a real PostgreSQL (§9): every host a real `scenesyncd` with its own
/// directories and socket, all on this machine, sharing one private database cluster.
@Suite(.serialized, TestEnvironment.postgres)
struct ClusterReplicationTests {
    /// Opens a subscribed connection to each host, its catch-up read up to `synced`.
    static func subscribers(_ cluster: ClusterHosts) async throws -> [SocketClient] {
        var clients: [SocketClient] = []
        for host in cluster.hosts {
            let client = try await host.connect()
            client.timeout = .seconds(60)
            try await client.subscribe()
            _ = try await client.events(until: "synced")
            clients.append(client)
        }
        return clients
    }

    /// A private database and `count` hosts on it, started, each with a subscriber that has read its catch-up
    /// (unless `subscribed` is false); all of it is stopped and removed when `body` returns or throws.
    static func withCluster(
        hosts count: Int, extraConfig: String = "", subscribed: Bool = true,
        _ body: (PostgresServer, ClusterHosts, [SocketClient]) async throws -> Void
    ) async throws {
        let server = try await PostgresServer.start()
        defer { server.cleanup() }
        let cluster = try ClusterHosts(server: server, count: count, extraConfig: extraConfig)
        defer { cluster.cleanup() }
        try await cluster.startAll()
        try await body(server, cluster, subscribed ? try await subscribers(cluster) : [])
    }

    /// Only scenes matching `cluster.scenes` are shared (§9): a change to any other scene stays on its host, in
    /// its events, files and the database, while a shared one made after it still arrives.
    @Test func aSceneOutsideClusterScenesStaysLocal() async throws {
        try await Self.withCluster(hosts: 2, extraConfig: "  scenes: [\"shared.*\"]") { server, cluster, watchers in
            let (origin, other) = (cluster.hosts[0], cluster.hosts[1])
            let writer = try await origin.connect()
            try await writer.ok("set", ["scene": J.string("local"), "path": #"[{"value":1}]"#])
            try origin.writeScene("local-file", "[2]")
            try await writer.sync()
            try await writer.ok("set", ["scene": J.string("shared.one"), "path": #"[{"value":3}]"#])

            // Events arrive in revision order, so once the shared change is there, the local ones would have been.
            let seen = try await watchers[1].events { $0.isRemoteChange(of: "shared.one", from: cluster.names[0]) }
            let leaked = seen.filter { ["local", "local-file"].contains($0["scene"]?.stringValue ?? "") }
            #expect(leaked.isEmpty, "local scenes reached the other host: \(leaked.map(\.text))")
            #expect(other.sceneBytes("local") == nil)
            #expect(other.sceneBytes("local-file") == nil)
            #expect(try await other.connect().request("get", ["scene": J.string("local")]).errorCode == "not_found")
            let rows = try await server.query("SELECT scene FROM scenesync.log ORDER BY seq")
            #expect(rows == "shared.one", "the database holds \(rows)")
            #expect(try await writer.clusterStats()["pushed"]?.uint64Value == 1)
        }
    }

    @Test(arguments: [2, 3])
    func everyChangeSourceOnEveryHostReachesEveryOtherHost(hostCount: Int) async throws {
        try await Self.withCluster(hosts: hostCount) { server, cluster, watchers in

            for (index, origin) in cluster.hosts.enumerated() {
                let name = cluster.names[index]
                let writer = try await origin.connect()
                try await writer.ok("hello", ["client": J.string("tester")])
                let fileScene = "file-\(name)"
                let clientScene = "client-\(name)"

                // A file written by an app on the origin host.
                try origin.writeScene(fileScene, #"[{"n":1},{"n":2}]"#)
                // A client's change on the origin host.
                try await writer.ok(
                    "set", ["scene": J.string(clientScene), "path": #"[{"type":"MyApp.Recipe","value":{"pie":{}}}]"#])
                for (other, watcher) in zip(cluster.hosts, watchers) where other !== origin {
                    let fileChange = try #require(
                        try await watcher.events { $0.isRemoteChange(of: fileScene, from: name) }.last)
                    #expect(fileChange["kind"]?.stringValue == "set")
                    #expect(fileChange["path"] == (try json(#"[{"value":{"n":1}},{"value":{"n":2}}]"#)))
                    let clientChange = try #require(
                        try await watcher.events { $0.isRemoteChange(of: clientScene, from: name) }.last)
                    #expect(clientChange["origin"]?["client"]?.stringValue == "tester")
                    #expect(clientChange["format"]?.stringValue == "codable")
                    // The files are written, with the origin host's bytes.
                    #expect(other.sceneBytes(fileScene) == origin.sceneBytes(fileScene))
                    #expect(other.sceneBytes(clientScene) == origin.sceneBytes(clientScene))
                }

                // Deletions: one by the app (the file removed), one by a client.
                try FileManager.default.removeItem(at: origin.sceneFile(fileScene))
                try await writer.ok("delete", ["scene": J.string(clientScene)])
                for (other, watcher) in zip(cluster.hosts, watchers) where other !== origin {
                    for scene in [fileScene, clientScene] {
                        let deletion = try #require(
                            try await watcher.events { $0.isRemoteChange(of: scene, from: name) }.last)
                        #expect(deletion["kind"]?.stringValue == "delete")
                        #expect(other.sceneBytes(scene) == nil)
                    }
                }
            }
            // A remote change is never pushed back: the database holds each host's changes once.
            let rows = try await server.query("SELECT count(*) FROM scenesync.log")
            #expect(rows == "\(4 * hostCount)")
            for (index, watcher) in watchers.enumerated() {
                let stats = try await watcher.clusterStats()
                #expect(stats["host"]?.stringValue == cluster.names[index])
                #expect(stats["connected"]?.boolValue == true)
                #expect(stats["pushed"]?.int64Value == 4)
                #expect(stats["received"]?.int64Value == Int64(4 * (hostCount - 1)))
            }
        }
    }

    @Test func aDatabaseOutageIsSurvivedAndCaughtUp() async throws {
        try await Self.withCluster(hosts: 2) { server, cluster, watchers in
            let (a, b) = (cluster.hosts[0], cluster.hosts[1])
            let writerA = try await a.connect()
            try await writerA.ok("set", ["scene": J.string("before"), "path": #"[{"value":1}]"#])
            _ = try await watchers[1].events { $0.isRemoteChange(of: "before", from: "hostA") }

            try await server.stop(immediate: true)
            // Every host keeps serving, and tells each subscription once.
            for watcher in watchers {
                let warning = try #require(try await watcher.events { $0.eventName == "warning" }.last)
                #expect(warning["code"]?.stringValue == "cluster_unavailable")
            }
            try await writerA.ok("set", ["scene": J.string("during"), "path": #"[{"value":1},{"value":2}]"#])
            try a.writeScene("during-file", "[3]")
            let writerB = try await b.connect()
            try await writerB.ok("set", ["scene": J.string("during-b"), "path": #"[{"value":4}]"#])
            try await writerA.sync()
            let stats = try await writerA.clusterStats()
            #expect(stats["connected"]?.boolValue == false)
            #expect(stats["pending"]?.int64Value == 2)
            // A new subscription during the outage learns of it at once.
            let late = try await b.connect()
            try await late.subscribe()
            let lateEvents = try await late.events { $0.eventName == "warning" }
            #expect(lateEvents.last?["code"]?.stringValue == "cluster_unavailable")

            try await server.startServer()
            var seen: [[JSONValue]] = []
            for (index, watcher) in watchers.enumerated() {
                let events = try await watcher.events { $0.eventName == "warning" }
                seen.append(events)
                #expect(events.last?["code"]?.stringValue == "cluster_restored")
                // Told once per outage: no second cluster_unavailable in between.
                let repeated = events.filter { $0["code"]?.stringValue == "cluster_unavailable" }
                #expect(repeated.count == 0, "host \(index)")
            }
            // The other host's changes may arrive before or after its own restore: look in both.
            for (index, (scene, from)) in [(1, ("during-file", "hostA")), (0, ("during-b", "hostB"))] {
                if !seen[index].contains(where: { $0.isRemoteChange(of: scene, from: from) }) {
                    _ = try await watchers[index].events { $0.isRemoteChange(of: scene, from: from) }
                }
            }
            #expect(b.sceneBytes("during") == a.sceneBytes("during"))
            #expect(b.sceneBytes("during-file") == Array("[3]".utf8))
            #expect(a.sceneBytes("during-b") == b.sceneBytes("during-b"))
            // Another host may apply a push before its answer reaches the pushing host: wait for that answer.
            let pushed = try await eventually(timeout: .seconds(60)) {
                try await writerA.clusterStats()["pending"]?.int64Value == 0
            }
            #expect(pushed, "host A still counts changes as not pushed")
        }
    }

    @Test func aHostKilledWithUnpushedChangesPushesThemAfterItsRestart() async throws {
        try await Self.withCluster(hosts: 2) { server, cluster, watchers in
            let a = cluster.hosts[0]
            try await server.stop(immediate: true)
            _ = try await watchers[0].events { $0["code"]?.stringValue == "cluster_unavailable" }
            let writer = try await a.connect()
            try await writer.ok("set", ["scene": J.string("crash"), "path": #"[{"value":"x"}]"#])
            try await writer.ok("push", ["scene": J.string("crash"), "elements": #"[{"value":"y"}]"#])
            try a.writeScene("crash-file", "[7]")
            try await writer.sync()
            #expect(try await writer.clusterStats()["pending"]?.int64Value == 3)

            #expect(try await a.stopped(SIGKILL) == .signaled(SIGKILL))
            let restarted = DaemonProcess(sharing: a)
            defer { restarted.cleanup() }
            try await restarted.start()
            try await server.startServer()

            let b = cluster.hosts[1]
            do {
                _ = try await watchers[1].events { $0.isRemoteChange(of: "crash-file", from: "hostA") }
            } catch {
                print("hostA:\n\(restarted.stderrText)\nhostB:\n\(b.stderrText)")
                throw error
            }
            #expect(b.sceneBytes("crash") == Array(#"["x","y"]"#.utf8))
            #expect(b.sceneBytes("crash-file") == Array("[7]".utf8))
            // Nothing applied twice: each of A's three changes is in the database once, and B applied each once.
            #expect(try await server.query("SELECT count(*) FROM scenesync.log WHERE host = 'hostA'") == "3")
            let bClient = try await b.connect()
            let history = try await bClient.ok("history", ["scene": J.string("crash")])
            #expect(history["records"]?.arrayValue?.count == 2)
            let restartedClient = try await restarted.connect()
            #expect(try await eventually { try await restartedClient.clusterStats()["pending"]?.int64Value == 0 })
        }
    }

    /// The journal's appends are not synced (no push waits for the disk), so a power loss can take its tail, push
    /// numbers the database already holds with them. After the reboot the host must hand out none of them again:
    /// the database would take its new changes for duplicates of the old ones and drop them.
    @Test func aRebootThatLostTheJournalsTailReusesNoPushNumber() async throws {
        try await Self.withCluster(hosts: 2) { server, cluster, watchers in
            let a = cluster.hosts[0]
            let writer = try await a.connect()
            for value in 1...3 {
                try await writer.ok("set", ["scene": J.string("power"), "path": "[{\"value\":\(value)}]"])
            }
            _ = try await watchers[1].events {
                $0.isRemoteChange(of: "power", from: "hostA")
                    && $0["path"]?.arrayValue?.first?["value"]?.int64Value == 3
            }
            #expect(try await eventually { try await writer.clusterStats()["pending"]?.int64Value == 0 })
            #expect(try await a.stopped(SIGKILL) == .signaled(SIGKILL))

            // The power went: of the journal only what the start synced is left, its stream and state lines.
            let journal = a.state.appendingPathComponent("cluster-journal")
            let lines = try String(contentsOf: journal, encoding: .utf8).split(separator: "\n")
            #expect(lines.count > 2, "the pushes were not journaled")
            try (lines.prefix(2).joined(separator: "\n") + "\n").write(to: journal, atomically: true, encoding: .utf8)

            let rebooted = DaemonProcess(sharing: a)
            rebooted.extraEnvironment["SCENESYNC_TEST_BOOT_ID"] = "after-the-power-loss"
            defer { rebooted.cleanup() }
            try await rebooted.start()
            let again = try await rebooted.connect()
            try await again.ok("set", ["scene": J.string("power"), "path": #"[{"value":4}]"#])
            do {
                _ = try await watchers[1].events(timeout: .seconds(60)) {
                    $0.isRemoteChange(of: "power", from: "hostA")
                        && $0["path"]?.arrayValue?.first?["value"]?.int64Value == 4
                }
            } catch {
                print("hostA:\n\(rebooted.stderrText)")
                throw error
            }
            #expect(await eventually { cluster.hosts[1].sceneBytes("power") == Array("[4]".utf8) })
            let pushes = try await server.query(
                "SELECT push FROM scenesync.log WHERE host = 'hostA' AND scene = 'power' ORDER BY seq")
            let numbers = pushes.split(separator: "\n").compactMap { UInt64($0) }
            #expect(numbers.prefix(3) == [1, 2, 3])
            #expect(numbers.last.map { $0 > 1 << 32 } == true)
        }
    }

    @Test func aHostAwayLongerThanTheLogCatchesUpFromTheCurrentState() async throws {
        try await Self.withCluster(hosts: 2, extraConfig: "  log_keep: 100", subscribed: false) { server, cluster, _ in
            let (a, b) = (cluster.hosts[0], cluster.hosts[1])
            let writer = try await a.connect()
            try await writer.ok("set", ["scene": J.string("gone"), "path": #"[{"value":0}]"#])
            try await writer.ok("set", ["scene": J.string("kept"), "path": #"[{"value":0}]"#])
            // B has applied both before it goes away. Counted, not awaited as events: B may apply them before any
            // subscription of this test exists. The first remote change waits for both hosts' first connection to
            // the database, which a loaded machine can take longer than the default 15 s to make.
            let clientB = try await b.connect()
            clientB.timeout = .seconds(60)
            #expect(
                try await eventually(timeout: .seconds(60)) {
                    try await clientB.clusterStats()["received"]?.int64Value == 2
                })
            #expect(b.sceneBytes("kept") == Array("[0]".utf8))
            try await b.stop()

            for round in 1...80 {
                try await writer.ok("set", ["scene": J.string("busy"), "path": "[{\"value\":\(round)}]"])
                try await writer.ok("set", ["scene": J.string("kept"), "path": "[{\"value\":\(round)}]"])
            }
            try await writer.ok("delete", ["scene": J.string("gone")])
            #expect(try await eventually { try await writer.clusterStats()["pending"]?.int64Value == 0 })
            // The log was pruned past B's cursor.
            let oldest = try await server.query("SELECT min(seq) FROM scenesync.log")
            #expect((Int(oldest) ?? 0) > 3)

            let restarted = DaemonProcess(sharing: b)
            defer { restarted.cleanup() }
            try await restarted.start()
            let client = try await restarted.connect()
            // The catch-up writes the scenes' files one after another: wait for each.
            #expect(await eventually(timeout: .seconds(60)) { restarted.sceneBytes("busy") == Array("[80]".utf8) })
            #expect(await eventually { restarted.sceneBytes("gone") == nil })
            #expect(await eventually { restarted.sceneBytes("kept") == Array("[80]".utf8) })
            // One change per differing scene, not the missed log.
            let kept = try await client.ok("history", ["scene": J.string("kept")])
            #expect(kept["records"]?.arrayValue?.count == 1)
            let busy = try await client.ok("history", ["scene": J.string("busy")])
            #expect(busy["records"]?.arrayValue?.count == 1)
        }
    }

    @Test func concurrentWritersOnEveryHostConverge() async throws {
        try await Self.withCluster(hosts: 3) { server, cluster, watchers in
            let acknowledged = AsyncVariable<[String]>([])
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (index, host) in cluster.hosts.enumerated() {
                    group.addTask {
                        let client = try await host.connect()
                        for round in 0..<15 {
                            let value = "\(index)-\(round)"
                            if round % 3 == 0 {
                                // An app's write: never overwritten unread, not even by a remote change renamed
                                // over it an instant later (§3), so it reaches the database as well.
                                try host.writeScene("shared", "[\"\(value)\"]")
                            } else {
                                try await client.ok(
                                    "set", ["scene": J.string("shared"), "path": "[{\"value\":\"\(value)\"}]"])
                            }
                            acknowledged.update { $0.append(value) }
                        }
                        try await client.sync()
                    }
                }
                try await group.waitForAll()
            }
            // Quiet: every host has pushed everything and seen the database's newest change.
            let clients = try await cluster.hosts.asyncMap { try await $0.connect() }
            let converged = try await eventually(timeout: .seconds(60)) {
                let newest = try await server.query("SELECT seq FROM scenesync.meta")
                for client in clients {
                    let stats = try await client.clusterStats()
                    guard stats["pending"]?.int64Value == 0, stats["cluster_version_seen"]?.int64Value == Int64(newest)
                    else { return false }
                }
                return true
            }
            #expect(converged)
            let final = try await clients[0].scene("shared")
            for client in clients.dropFirst() {
                let scene = try await client.scene("shared")
                #expect(scene["path"] == final["path"])
                #expect(scene["format"] == final["format"])
            }
            let database = try await server.query(
                "SELECT convert_from(content, 'UTF8') FROM scenesync.scenes WHERE scene = 'shared'")
            #expect(cluster.hosts.allSatisfy { $0.sceneBytes("shared") == Array(database.utf8) })

            // Every change reached the database, an app's write as well as an acknowledged client change: as a
            // committed change, or as the state a later one overwrote (a conflict).
            let logged = try await server.query(
                "SELECT convert_from(content, 'UTF8') FROM scenesync.log UNION ALL "
                    + "SELECT convert_from(conflict_content, 'UTF8') FROM scenesync.log WHERE conflict_content IS NOT NULL"
            )
            for value in acknowledged.update({ $0 }) {
                #expect(logged.contains("\"\(value)\""), "\(value) never reached the database")
            }
            // Per host, change events come in revision order with no duplicates and no gaps.
            for (index, watcher) in watchers.enumerated() {
                let events = watcher.takeEvents() + (try await watcher.drainEvents())
                let revisions = events.filter { $0.eventName == "change" }.compactMap(\.revision)
                #expect(revisions == Array(revisions.sorted()), "host \(index)")
                if let first = revisions.first {
                    #expect(revisions == Array(first..<(first + UInt64(revisions.count))), "host \(index)")
                }
            }
        }
    }

    /// An app's write that lands in the window of a remote change's rename (§3) is not overwritten. Local first
    /// (§9): it is a change of this host, merged and put back in the file, and it is pushed after the remote
    /// change, so every host ends on it. (The test hook lands it in exactly that window; see WriteRaceTests.)
    @Test func anAppWriteInTheWindowOfARemoteChangeWins() async throws {
        let server = try await PostgresServer.start()
        defer { server.cleanup() }
        let cluster = try ClusterHosts(server: server, count: 2)
        defer { cluster.cleanup() }
        try await cluster.startAll()
        let watchers = try await Self.subscribers(cluster)
        let (origin, racing) = (cluster.hosts[0], cluster.hosts[1])
        let appBytes = Array(#"["app"]"#.utf8)
        try Data(appBytes).write(to: racing.scenes.appendingPathComponent(".scenesync-test-race-shared.json"))

        let writer = try await origin.connect()
        try await writer.ok("set", ["scene": J.string("shared"), "path": #"[{"value":"client"}]"#])
        let appPath = try json(#"[{"value":"app"}]"#)
        let appChange = try #require(
            try await watchers[1].events {
                $0.eventName == "change" && $0["scene"]?.stringValue == "shared"
            }.last)
        #expect(appChange["origin"]?["source"]?.stringValue == "file")
        #expect(appChange["path"] == appPath)
        let remote = try #require(
            try await watchers[0].events { $0.isRemoteChange(of: "shared", from: cluster.names[1]) }.last)
        #expect(remote["path"] == appPath)
        #expect(remote["conflict"]?["path"] == (try json(#"[{"value":"client"}]"#)))

        // The racing host's step (the app's write put back) is done once a sync after it is answered.
        try await watchers[1].sync()
        #expect(racing.sceneBytes("shared") == appBytes)
        #expect(origin.sceneBytes("shared") == appBytes)
        #expect(
            try await server.query(
                "SELECT convert_from(content, 'UTF8') FROM scenesync.scenes WHERE scene = 'shared'")
                == #"["app"]"#)
        // The client's change never became the racing host's state: its only change is the app's.
        let history = try await watchers[1].ok("history", ["scene": J.string("shared")])
        #expect(history["records"]?.arrayValue?.count == 1, "\(history.text)")

        // The same for a remote deletion: the file the daemon removes is an app's new write, and it stays.
        let secondBytes = Array(#"["app2"]"#.utf8)
        try Data(secondBytes).write(to: racing.scenes.appendingPathComponent(".scenesync-test-race-shared.json"))
        try await writer.ok("delete", ["scene": J.string("shared")])
        let secondPath = try json(#"[{"value":"app2"}]"#)
        let secondChange = try #require(
            try await watchers[1].events {
                $0.eventName == "change" && $0["scene"]?.stringValue == "shared"
            }.last)
        #expect(secondChange["origin"]?["source"]?.stringValue == "file")
        #expect(secondChange["path"] == secondPath)
        let recreated = try #require(
            try await watchers[0].events { $0.isRemoteChange(of: "shared", from: cluster.names[1]) }.last)
        #expect(recreated["kind"]?.stringValue == "set")
        #expect(recreated["path"] == secondPath)
        try await watchers[1].sync()
        #expect(racing.sceneBytes("shared") == secondBytes)
        #expect(origin.sceneBytes("shared") == secondBytes)
    }

    @Test func clusterConfigurationIsChecked() async throws {
        let scratch = try TemporaryDirectory("cfg")
        defer { scratch.remove() }
        let cases: [(String, String)] = [
            ("postgres: \"mysql://x@db/app\"", "expected a URL"),
            ("postgres: \"postgres://user:secret@db/app\"", "password in the URL"),
            ("postgres: \"postgres://user@db\"", "no database"),
            ("postgres: \"postgres://user@db/app?sslmode=sometimes\"", "sslmode"),
            ("postgres: \"postgres://user@db/app\"\n  password_file: \(scratch.path)/missing", "password_file"),
            ("schema: \"Bad-Name\"", "schema"),
        ]
        for (lines, expected) in cases {
            let file = scratch.appending("c.yaml").path
            try "cluster:\n  \(lines)\n".write(toFile: file, atomically: true, encoding: .utf8)
            let result = try await runScenesyncd(["--config", file, "--check-config"])
            #expect(result.status == 1, "\(lines)")
            #expect(result.output.contains(expected), "\(lines): \(result.output)")
            #expect(!result.output.contains("secret"))
        }
        let valid = scratch.appending("ok.yaml").path
        try "cluster:\n  postgres: \"postgres://u@db.example:5433/app?sslmode=require\"\n".write(
            toFile: valid, atomically: true, encoding: .utf8)
        #expect(try await runScenesyncd(["--config", valid, "--check-config"]).status == 0)
    }

    @Test func anUnreachableDatabaseIsNoReasonNotToStart() async throws {
        let daemon = try DaemonProcess(
            config: "cluster:\n  postgres: \"postgres://nobody@/nothing?host=/nonexistent-dir\"\n  host: lonely\n")
        defer { daemon.cleanup() }
        try await daemon.start()
        let client = try await daemon.connect()
        client.timeout = .seconds(60)
        try await client.subscribe()
        _ = try await client.events(until: "synced")
        try await client.ok("set", ["scene": J.string("alone"), "path": #"[{"value":1}]"#])
        let warning = try await client.events { $0.eventName == "warning" }.last
        #expect(warning?["code"]?.stringValue == "cluster_unavailable")
        let stats = try await client.clusterStats()
        #expect(stats["host"]?.stringValue == "lonely")
        #expect(stats["connected"]?.boolValue == false)
        #expect(stats["pending"]?.int64Value == 1)
    }
}

extension SocketClient {
    /// Every event that arrives within a short quiet period, after a `sync` has delivered what was queued.
    func drainEvents() async throws -> [JSONValue] {
        try await sync()
        return takeEvents()
    }
}

extension Array {
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var result: [T] = []
        for element in self { result.append(try await transform(element)) }
        return result
    }
}
