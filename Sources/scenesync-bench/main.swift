// scenesync-bench <scenario> [options]: micro-benchmarks, one scenario per run.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

let usage = """
    usage: scenesync-bench <scenario> [--json] [--scenes N] [--operations N] [--seed N]

    scenarios:
      core    SceneStore merge cost (plan+commit, applyFile) and memory per scene

    options:
      --json          one JSON object per result instead of a table
      --scenes N      scenes in the store (default 100000)
      --operations N  timed operations per measurement (default 20000)
      --seed N        seed of the generated scenes and operations (default 1)

    """

func fail(_ message: String) -> Never {
    printError("scenesync-bench: \(message)\n\n\(usage)")
    exit(2)
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
    case "--scenes", "--operations", "--seed":
        guard let text = arguments.popFirst(), let value = Int(text), value > 0 else {
            fail("\(argument) needs a positive number")
        }
        switch argument {
        case "--scenes": options.scenes = value
        case "--operations": options.operations = value
        default: options.seed = UInt64(value)
        }
    default:
        if argument.hasPrefix("-") { fail("unknown option \(argument)") }
        if scenario != nil { fail("one scenario at a time") }
        scenario = argument
    }
}

switch scenario {
case "core":
    CoreBenchmark(options: options).run()
case nil:
    fail("no scenario given")
case let other?:
    fail("unknown scenario \(other)")
}
