import Foundation
import Testing

/// `scenesync-bench` as a command: its options parse, and a tiny scenario on a real daemon prints well-formed
/// results. Nothing here looks at a figure's size: the bench measures, the tests only check its output's shape.
@Suite("scenesync-bench")
struct BenchTests {
    private func bench(_ arguments: [String]) async throws -> CLIProcess.Result {
        try await CLIProcess.run(arguments, executable: BuiltProducts.scenesyncBench)
    }

    @Test("--help lists every scenario, and each scenario with a peer has --peers")
    func help() async throws {
        let root = try await bench(["--help"])
        #expect(root.status == 0, "\(root)")
        for scenario in ["all", "core", "file-latency", "fanout", "scale", "slow-subscriber", "cluster"] {
            #expect(root.stdout.contains("  \(scenario) "), "\(scenario) missing from:\n\(root.stdout)")
        }
        #expect(!root.stdout.contains("inotify-relay"), "the relay peer is internal")
        for scenario in ["file-latency", "fanout", "scale", "all"] {
            let help = try await bench([scenario, "--help"])
            #expect(help.status == 0, "\(help)")
            #expect(help.stdout.contains("[--peers]"), "\(scenario) --help:\n\(help.stdout)")
        }
        let slow = try await bench(["slow-subscriber", "--help"])
        #expect(!slow.stdout.contains("[--peers]"), "slow-subscriber has no peer")
    }

    @Test("cluster --help names its options and its floor; nothing runs")
    func clusterHelp() async throws {
        let help = try await bench(["cluster", "--help"])
        #expect(help.status == 0, "\(help)")
        for option in ["--rates", "--duration", "--files", "--burst", "--json"] {
            #expect(help.stdout.contains(option), "cluster --help lacks \(option):\n\(help.stdout)")
        }
        #expect(help.stdout.contains("NOTIFY"), "cluster --help does not name its floor:\n\(help.stdout)")
        #expect(!help.stdout.contains("[--peers]"), "cluster's floor is always measured, not a --peers option")
        let refused = try await bench(["cluster", "--rates", "0", "--no-build"])
        #expect(refused.status != 0, "cluster --rates 0 was accepted: \(refused)")
    }

    @Test("bad options are refused before anything runs")
    func badOptions() async throws {
        for arguments in [
            ["fanout", "--subscribers", "0"], ["fanout", "--duration", "-1"], ["fanout", "--bogus"], ["nonsense"],
            ["file-latency", "--filesystem", "floppy"], ["fanout", "--peers", "--socket", "/tmp/x.sock"],
        ] {
            let result = try await bench(arguments + ["--no-build"])
            #expect(result.status != 0, "\(arguments) was accepted: \(result)")
            #expect(result.stdout.isEmpty || !result.stdout.contains("\"scenario\""), "\(arguments): \(result)")
        }
    }

    @Test("a tiny fanout run prints one JSON object per run, every change delivered")
    func tinyFanout() async throws {
        let result = try await bench([
            "fanout", "--json", "--duration", "0.2", "--subscribers", "2", "--rate", "50", "--daemon",
            BuiltProducts.scenesyncd.path,
        ])
        #expect(result.status == 0, "\(result)")
        let objects = try result.lines.map { line in
            try #require(
                try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "not an object: \(line)")
        }
        #expect(objects.count == 3, "one saturated run and two paced ones:\n\(result.stdout)")
        for object in objects {
            #expect(object["scenario"] as? String == "fanout")
            for key in [
                "deliveries_per_s", "p50_ms", "p99_ms", "changes", "daemon_cpu_us_per_change",
                "daemon_switches_per_change",
            ] {
                #expect(object[key] is NSNumber, "\(key) in \(object)")
            }
            #expect(object["lost"] as? Int == 0, "\(object)")
            #expect(object["duplicated"] as? Int == 0, "\(object)")
            #expect(object["complete"] as? Bool == true, "\(object)")
        }
        #expect(objects.map { $0["run"] as? String } == ["saturated", "paced 1000/s", "paced 50/s"])
        #expect(objects.map { $0["subscribers"] as? Int } == [2, 1, 100])
    }
}
