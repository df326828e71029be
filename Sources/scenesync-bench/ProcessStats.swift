#if canImport(Glibc)
import Glibc
#endif

/// CPU and memory of a process as the kernel accounts them, read from `/proc`: the daemon's cost is measured from
/// outside, without asking it.
enum ProcessStats {
    /// User + system CPU seconds of `pid` (`/proc/<pid>/stat` fields 14 and 15), `nil` when unreadable.
    static func cpuSeconds(_ pid: Int32) -> Double? {
        guard let text = readSmallFile("/proc/\(pid)/stat"), let close = text.lastIndex(of: ")") else { return nil }
        // Fields after the command name, which may contain spaces: state is field 3, utime 14, stime 15.
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// Voluntary context switches of `pid`, summed over its threads (`voluntary_ctxt_switches` of each
    /// `/proc/<pid>/task/*/status`): each is a thread that went to sleep waiting for work, so their count per change
    /// is how many wake-ups a change costs. Threads that ended before the call are not counted: read it while the
    /// process runs, before and after a run. 0 when unreadable.
    static func voluntarySwitches(_ pid: Int32) -> Int {
        guard let tasks = opendir("/proc/\(pid)/task") else { return 0 }
        defer { closedir(tasks) }
        var total = 0
        while let entry = readdir(tasks) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard !name.hasPrefix("."), let status = readSmallFile("/proc/\(pid)/task/\(name)/status") else { continue }
            for line in status.split(separator: "\n") where line.hasPrefix("voluntary_ctxt_switches:") {
                total += line.split(separator: ":").last.flatMap { Int($0.filter { $0 != " " && $0 != "\t" }) } ?? 0
            }
        }
        return total
    }

    /// Resident set size of `pid` in bytes (`/proc/<pid>/statm`), 0 when unreadable.
    static func residentBytes(_ pid: Int32) -> Int {
        guard let text = readSmallFile("/proc/\(pid)/statm") else { return 0 }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// The anonymous part of the resident set (`RssAnon` of `/proc/<pid>/status`): the heap and stacks, without the
    /// pages of the executable and its libraries, which a statically linked Swift program has many more of.
    static func anonymousBytes(_ pid: Int32) -> Int {
        guard let text = readSmallFile("/proc/\(pid)/status") else { return 0 }
        for line in text.split(separator: "\n") where line.hasPrefix("RssAnon:") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            if fields.count >= 2, let kilobytes = Int(fields[1]) { return kilobytes * 1024 }
        }
        return 0
    }

    /// User + system CPU seconds of this process, every thread included (`getrusage(RUSAGE_SELF)`).
    static func ownCPUSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6 + Double(usage.ru_stime.tv_sec)
            + Double(usage.ru_stime.tv_usec) / 1e6
    }

    /// The load averages and the number of CPUs, to print beside results taken on a shared machine.
    static func loadAverage() -> String {
        let cpus = sysconf(Int32(_SC_NPROCESSORS_ONLN))
        guard let text = readSmallFile("/proc/loadavg") else { return "? on \(cpus) CPUs" }
        return text.split(separator: " ").prefix(3).joined(separator: " ") + " on \(cpus) CPUs"
    }

    static func readSmallFile(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        return String(decoding: buffer[0..<count], as: UTF8.self)
    }
}
