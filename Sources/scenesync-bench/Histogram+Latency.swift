import Histogram

/// Latencies in nanoseconds, recorded by the reader threads and merged at the end.
///
/// HdrHistogram with three significant digits: recording is an index computation and one store, cheap enough to
/// time every one of millions of events, and its percentiles are accurate to 0.1 % whatever the range, which a
/// comparison with a peer measured in the same run needs.
extension Histogram where Count == UInt64 {
    /// One minute: a latency above it is recorded as one minute rather than lost.
    static let highestLatency: UInt64 = 60_000_000_000

    static func latency() -> Histogram<UInt64> {
        Histogram(highestTrackableValue: highestLatency, numberOfSignificantValueDigits: .three)
    }

    @inline(__always)
    mutating func record(nanoseconds: Int64) {
        record(Swift.min(UInt64(Swift.max(0, nanoseconds)), Self.highestLatency))
    }

    /// The value below which `fraction` of the samples lie, in milliseconds (0 without samples).
    func milliseconds(at fraction: Double) -> Double {
        totalCount == 0 ? 0 : Double(valueAtPercentile(fraction * 100)) / 1e6
    }

    var maximumMilliseconds: Double { totalCount == 0 ? 0 : Double(max) / 1e6 }
}
