// scenesync-bench <scenario> [options]: benchmarks, one scenario per run.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

let usage = """
    usage: scenesync-bench <scenario> [options]

    scenarios:
      core             SceneStore merge cost (plan+commit, applyFile) and memory per scene (no daemon)
      file-latency     scene files replaced atomically at a steady rate; latency to 1 and 100 subscribers
      fanout           pipelined sets on one scene to 1, 10, 100, 1000 subscribers; then a paced run
      scale            10,000 and 100,000 scene files: start, RSS, list/get, snapshot, shutdown, restart
      slow-subscriber  100 subscribers with and without one that stops reading

    options:
      --json              one JSON object per result instead of a table
      --duration S        seconds per measured run (file-latency, slow-subscriber: 5; fanout: 3)
      --subscribers N,…   subscriber counts (file-latency: 1,100; fanout: 1,10,100,1000; slow-subscriber: 100)
      --rate N            changes per second of the paced runs (file-latency: 1000; fanout paced and
                          slow-subscriber: 2000)
      --scenes N,…        scenes (core: 100000; scale: 10000,100000; file-latency: files written, 100)
      --window N          fanout: changes the writer may be ahead of the slowest subscriber (8192)
      --threads N         subscriber reader threads (default: one per 250 subscribers, at most 4)
      --socket PATH       drive the daemon listening there instead of starting one (not for scale)
      --scenes-dir DIR    with --socket: that daemon's scenes directory (file-latency writes there)
      --daemon PATH       the scenesyncd to start (default: the one beside this executable, rebuilt first)
      --no-build          do not run swift build for scenesyncd first
      --operations N      core: timed operations per measurement (20000)
      --seed N            core, scale: seed of the generated scenes (1)

    """

func fail(_ message: String) -> Never {
    printError("scenesync-bench: \(message)\n\n\(usage)")
    exit(2)
}

func positiveList(_ text: String?, _ option: String) -> [Int] {
    guard let text else { fail("\(option) needs a value") }
    let values = text.split(separator: ",").map { Int(String($0.filter { $0 != "_" })) }
    guard !values.isEmpty, values.allSatisfy({ ($0 ?? 0) > 0 }) else { fail("\(option) needs positive numbers") }
    return values.compactMap { $0 }
}

var options = BenchOptions()
var scenario: String? = nil
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--json": options.json = true
    case "--help", "-h":
        print(usage, terminator: "")
        exit(0)
    case "--no-build": options.build = false
    case "--scenes": options.scenes = positiveList(arguments.popFirst(), argument)
    case "--subscribers": options.subscribers = positiveList(arguments.popFirst(), argument)
    case "--duration":
        guard let text = arguments.popFirst(), let value = Double(text), value > 0, value <= 3600 else {
            fail("--duration needs seconds (more than 0, at most 3600)")
        }
        options.duration = value
    case "--socket", "--scenes-dir", "--daemon":
        guard let value = arguments.popFirst(), !value.isEmpty else { fail("\(argument) needs a path") }
        switch argument {
        case "--socket": options.socket = value
        case "--scenes-dir": options.scenesDirectory = value
        default: options.daemon = value
        }
    case "--operations", "--seed", "--rate", "--window", "--threads":
        guard let text = arguments.popFirst(), let value = Int(text), value > 0 else {
            fail("\(argument) needs a positive number")
        }
        switch argument {
        case "--operations": options.operations = value
        case "--rate": options.rate = value
        case "--window": options.window = value
        case "--threads": options.threads = value
        default: options.seed = UInt64(value)
        }
    default:
        if argument.hasPrefix("-") { fail("unknown option \(argument)") }
        if scenario != nil { fail("one scenario at a time") }
        scenario = argument
    }
}

UnixSocket.raiseDescriptorLimit()
// A subscriber the daemon closed must not kill the bench with SIGPIPE; send() reports EPIPE instead.
signal(SIGPIPE, SIG_IGN)

do throws(BenchError) {
    // Find (and build) scenesyncd once, not for every daemon a scenario starts.
    if let scenario, scenario != "core", options.socket == nil {
        options.daemon = try BenchDaemon.locate(options)
        options.build = false
    }
    switch scenario {
    case "core":
        CoreBenchmark(options: options).run()
    case "file-latency":
        try FileLatencyBenchmark(options: options).run()
    case "fanout":
        try FanoutBenchmark(options: options).run()
    case "scale":
        try ScaleBenchmark(options: options).run()
    case "slow-subscriber":
        try SlowSubscriberBenchmark(options: options).run()
    case nil:
        fail("no scenario given")
    case let other?:
        fail("unknown scenario \(other)")
    }
} catch {
    printError("scenesync-bench: \(error)")
    exit(1)
}
