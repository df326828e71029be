import Foundation
import Logging
import SceneSyncCore
import Synchronization
import Testing

@testable import SceneSyncDaemon

#if canImport(Glibc)
import Glibc
#endif

/// Every thread the daemon starts has an owner that ends it: a process that runs the daemon again and again (a
/// test, an app embedding it) does not gather threads, and no two signal receivers compete for one signal.
@Suite struct DaemonThreadsTests {
    /// In a process of its own (an exit test), so that no other test's threads are counted: the daemon runs and
    /// stops five times, and after the first (which starts the process's shared event loops) the count stays.
    @Test func runningTheDaemonAgainAndAgainGathersNoThread() async {
        await #expect(processExitsWith: .success) {
            var template = Array("/tmp/ssthreads.XXXXXX".utf8CString)
            guard let created = mkdtemp(&template) else { exit(2) }
            let root = String(cString: created)
            let configuration = DaemonConfiguration(
                defaults: PlatformDefaults(
                    scenesDirectory: root + "/scenes", stateDirectory: root + "/state",
                    configFile: root + "/none.yaml", socketPath: root + "/s.sock"))
            let daemon = Daemon(
                configuration: configuration, overrides: ConfigurationOverrides(), environment: [:],
                logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() })
            var baseline: Int? = nil
            for _ in 0..<5 {
                let ended = Atomic<Bool>(false)
                let run = Task {
                    defer { ended.store(true, ordering: .sequentiallyConsistent) }
                    try await daemon.run()
                }
                // Listening once the socket is at its path (it is bound, then moved there). Not probed by connecting:
                // a connection accepted but not yet served when the run is cancelled ends the process (NIO's
                // writer of a channel never handed to `executeThenClose`).
                while !DaemonThreadsTests.isSocket(root + "/s.sock") {
                    // A run that ends before it listens failed to start: a previous run kept its state lock.
                    if ended.load(ordering: .sequentiallyConsistent) { exit(3) }
                    try? await Task.sleep(for: .milliseconds(5))  // a pause between checks of the condition
                }
                run.cancel()
                _ = await run.result
                // The daemon's own threads (its signal and inotify threads, its blocking executor's pool) are
                // gone, and after the first run, which starts the process's shared event loops, none is added.
                // A thread told to end may take a moment to be gone, so the count is checked until a deadline.
                let deadline = ContinuousClock.now + .seconds(10)
                while !DaemonThreadsTests.threadNames().filter(DaemonThreadsTests.isDaemonThread).isEmpty
                    || DaemonThreadsTests.threadNames().count > (baseline ?? .max)
                {
                    if ContinuousClock.now > deadline { exit(4) }
                    try? await Task.sleep(for: .milliseconds(10))  // a pause between checks of the condition
                }
                if baseline == nil { baseline = DaemonThreadsTests.threadNames().count }
            }
            try? FileManager.default.removeItem(atPath: root)  // a temp directory; the system cleans up too
            exit(0)
        }
    }

    static func isSocket(_ path: String) -> Bool {
        var st = stat()
        return lstat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFSOCK
    }

    /// The daemon's own threads: named by it (`ssd-`), or its executor's pool (NIO's default `TP-#` names; the
    /// process's shared pool is `SGLTN-TP-#`).
    static func isDaemonThread(_ name: String) -> Bool {
        name.hasPrefix("ssd-") || name.hasPrefix("TP-#")
    }

    /// The names of the process's threads, from `/proc/self/task/*/comm`.
    static func threadNames() -> [String] {
        guard let directory = opendir("/proc/self/task") else { return [] }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let tid = withUnsafeBytes(of: entry.pointee.d_name) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard tid != ".", tid != ".." else { continue }
            let fd = open("/proc/self/task/\(tid)/comm", O_RDONLY)
            guard fd >= 0 else { continue }  // ended meanwhile
            var buffer = [UInt8](repeating: 0, count: 32)
            let count = read(fd, &buffer, buffer.count)
            close(fd)
            names.append(
                String(decoding: buffer.prefix(max(0, count)), as: UTF8.self).trimmingCharacters(in: .newlines))
        }
        return names
    }
}
