import ArgumentParser

/// `--duration`, taken by every scenario that measures for a while: one spelling and one check for all of them.
/// Left out, each scenario uses its own default, so the commands need not repeat it.
struct DurationOption: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Seconds per measured run (default: 3; file-latency and slow-subscriber: 5).", valueName: "s"))
    var duration: Double?

    func validate() throws {
        if let duration, !(duration > 0 && duration <= 3600) {
            throw ValidationError("--duration needs 0 < s ≤ 3600")
        }
    }
}
