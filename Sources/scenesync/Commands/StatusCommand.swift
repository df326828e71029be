import ArgumentParser
import SceneSyncClient
import SceneSyncCore

/// `scenesync status`: `hello` and `stats` in one view, what an operator checks first.
struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show the daemon's version, clock and counters.",
        discussion: "With --json, prints one object: the members of the hello answer, then those of stats.")

    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let (helloResponse, statsResponse) = try await global.withConnection { connection in
            (try await connection.send(.hello(client: nil)), try await connection.send(.stats))
        }
        if global.json {
            var members: [(String, JSONValue)] = []
            for response in [helloResponse, statsResponse] {
                for member in response.objectValue?.members ?? [] where member.key != "id" {
                    members.append((member.key, member.value))
                }
            }
            Output.json(.object(JSONObject(members)))
            return
        }
        let hello = try ServerInfo(response: helloResponse)
        let stats = try DaemonStats(response: statsResponse)
        var rows: [(String, String)] = [
            ("server", "\(hello.server) \(hello.version) (protocol \(hello.protocolVersion))"),
            ("pid", "\(hello.pid)"),
            ("socket", global.socketPath),
            ("epoch", stats.clock.epoch),
            ("revision", "\(stats.clock.revision)"),
            ("scenes", "\(stats.scenes)"),
            ("clients", "\(stats.clients)"),
            ("subscribers", "\(stats.subscribers)"),
            ("uptime", Format.duration(seconds: stats.uptimeSeconds)),
            ("events sent", "\(stats.eventsSent)"),
            ("events dropped", "\(stats.eventsDropped)"),
            ("lagging now", "\(stats.lagged)"),
            ("file errors", "\(stats.fileErrors)"),
            ("snapshots", "\(stats.snapshots)"),
        ]
        if let last = stats.lastSnapshot {
            rows.append(
                ("last snapshot", "\(Format.revision(last.revision)) at \(last.time) (\(last.reason)) \(last.path)"))
        } else {
            rows.append(("last snapshot", "none since start"))
        }
        rows.append(("memory", Format.bytes(stats.rssBytes)))
        if let cluster = stats.cluster {
            let state = cluster.connected ? "connected" : "unavailable (working alone)"
            rows.append(("cluster", "\(state) as host \(cluster.host)"))
            rows.append(
                (
                    "cluster changes",
                    "\(cluster.pending) pending, \(cluster.pushed) pushed, \(cluster.received) received, "
                        + "seen up to \(cluster.clusterVersionSeen)"
                ))
        } else {
            rows.append(("cluster", "off"))
        }
        let width = rows.map(\.0.count).max() ?? 0
        for (key, value) in rows {
            Output.line(key + String(repeating: " ", count: width - key.count + 2) + value)
        }
    }
}
