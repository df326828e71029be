/// A log-linear histogram of nanosecond latencies: exact below 128 ns, then 64 buckets per power of two (at most
/// 1.6 % wide).
///
/// Recording is a few integer operations and one array store, so a reader thread can time every one of millions of
/// events without becoming the bottleneck it is measuring; per-thread histograms merge exactly at the end.
struct LatencyHistogram {
    private static let exact = 128
    private static let perOctave = 64
    private static let bucketCount = exact + (64 - 7) * perOctave

    private var counts = [UInt64](repeating: 0, count: LatencyHistogram.bucketCount)
    private(set) var count: UInt64 = 0
    private(set) var maximum: Int64 = 0
    private(set) var sum: Double = 0

    @inline(__always)
    mutating func record(_ nanoseconds: Int64) {
        let value = UInt64(max(0, nanoseconds))
        counts[Self.index(value)] &+= 1
        count &+= 1
        sum += Double(value)
        if nanoseconds > maximum { maximum = nanoseconds }
    }

    mutating func merge(_ other: LatencyHistogram) {
        for index in 0..<counts.count { counts[index] &+= other.counts[index] }
        count &+= other.count
        sum += other.sum
        maximum = max(maximum, other.maximum)
    }

    /// The value below which `fraction` of the samples lie (the bucket's midpoint, never above the maximum);
    /// 0 without samples.
    func percentile(_ fraction: Double) -> Int64 {
        guard count > 0 else { return 0 }
        let rank = max(1, UInt64((fraction * Double(count)).rounded(.up)))
        var seen: UInt64 = 0
        for (index, bucketCount) in counts.enumerated() where bucketCount > 0 {
            seen += bucketCount
            if seen >= rank { return min(maximum, Self.midpoint(index)) }
        }
        return maximum
    }

    var mean: Double { count == 0 ? 0 : sum / Double(count) }

    @inline(__always)
    private static func index(_ value: UInt64) -> Int {
        if value < UInt64(exact) { return Int(value) }
        let octave = 63 - value.leadingZeroBitCount  // >= 7
        let top = Int(value >> UInt64(octave - 6))  // 64..<128
        return exact + (octave - 7) * perOctave + (top - perOctave)
    }

    private static func midpoint(_ index: Int) -> Int64 {
        if index < exact { return Int64(index) }
        let octave = (index - exact) / perOctave + 7
        let top = Int64((index - exact) % perOctave + perOctave)
        let shift = Int64(octave - 6)
        let low = top << shift
        return low + (Int64(1) << shift) / 2
    }
}
