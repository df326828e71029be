/// One figure measured on scenesync and on a peer in the same run: the ratio scenesync/peer and whether it meets
/// the target. Ratios measured in one run hold on a loaded machine where absolute figures do not.
struct Comparison {
    enum Goal {
        /// Throughput: the ratio must be at least this.
        case ratioAtLeast(Double)
        /// Latency, time or memory: the ratio must be at most this.
        case ratioAtMost(Double)
        /// scenesync's own figure must be at most this, whatever the peer's (the ratio is shown for context).
        case atMost(Double)
    }

    let figure: String
    let scenesync: Double
    let peer: String
    let peerValue: Double
    let goal: Goal
    var decimals = 3

    var ratio: Double { peerValue > 0 ? scenesync / peerValue : .nan }

    var met: Bool {
        switch goal {
        case .ratioAtLeast(let bound): return ratio >= bound
        case .ratioAtMost(let bound): return ratio <= bound
        case .atMost(let bound): return scenesync <= bound
        }
    }

    var target: String {
        switch goal {
        case .ratioAtLeast(let bound): return "≥ \(fixed(bound, 2))×"
        case .ratioAtMost(let bound): return "≤ \(fixed(bound, 2))×"
        case .atMost(let bound): return "≤ \(fixed(bound, decimals))"
        }
    }

    var fields: [Field] {
        [
            .string("figure", "figure", figure),
            .number("scenesync", "scenesync", scenesync, decimals),
            .string("peer", "peer", peer),
            .number("peer value", "peer_value", peerValue, decimals),
            .number("ratio", "ratio", ratio, 3),
            .string("target", "target", target),
            .bool("met?", "met", met),
        ]
    }
}

extension ResultTable {
    /// The comparison table of a scenario, after its detailed rows.
    func compare(_ comparisons: [Comparison]) {
        guard !comparisons.isEmpty else { return }
        note("\nscenesync vs peers, same run (ratio = scenesync / peer):")
        for comparison in comparisons { row(comparison.fields + [.bool("", "comparison", true)]) }
    }
}
