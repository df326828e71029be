import ArgumentParser
import SceneSyncClient
import SceneSyncCore

/// `scenesync metrics`: the daemon's metrics in the Prometheus text exposition format, for a scrape or for
/// node_exporter's textfile collector (see `systemd/scenesync-metrics.service`).
struct MetricsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "metrics",
        abstract: "Print the daemon's metrics in the Prometheus text format.",
        discussion: "With --json, prints one object with the text in its \"text\" member.")

    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let text = try await global.withConnection { connection in try await connection.metrics() }
        if global.json {
            Output.json(.object(JSONObject([("text", .string(text))])))
        } else {
            print(text, terminator: text.hasSuffix("\n") ? "" : "\n")
        }
    }
}
