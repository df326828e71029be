#if canImport(Glibc)
import Glibc
#endif

/// Nanosecond clocks without allocation, so that timestamping an event costs a vDSO call and nothing more.
enum Monotonic {
    /// `CLOCK_MONOTONIC` in nanoseconds: the one clock every timestamp of the bench (and its latency table) uses.
    @inline(__always)
    static func now() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Int64(time.tv_sec) &* 1_000_000_000 &+ Int64(time.tv_nsec)
    }

    /// CPU time of the calling thread in nanoseconds, to report what the measuring clients cost.
    static func threadCPU() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return Int64(time.tv_sec) &* 1_000_000_000 &+ Int64(time.tv_nsec)
    }

    /// Sleeps until an absolute `now()` value: a paced loop that oversleeps once does not drift.
    static func sleep(until deadline: Int64) {
        var target = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &target, nil) == EINTR {}
    }

    static func sleep(seconds: Double) {
        sleep(until: now() + Int64(seconds * 1e9))
    }

    static func seconds(_ nanoseconds: Int64) -> Double { Double(nanoseconds) / 1e9 }
}
