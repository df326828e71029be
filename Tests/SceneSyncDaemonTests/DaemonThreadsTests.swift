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
                while !UnixSocketProbe.isListening(root + "/s.sock") {
                    // A run that ends before it listens failed to start: a previous run kept its state lock.
                    if ended.load(ordering: .sequentiallyConsistent) { exit(3) }
                    try? await Task.sleep(for: .milliseconds(5))  // a pause between checks of the condition
                }
                run.cancel()
                _ = await run.result
                // After the first run, which starts the process's shared event loops, no run adds a thread. A thread
                // that was told to end may take a moment to be gone, so the count is checked until a deadline.
                guard let baseline else {
                    baseline = DaemonThreadsTests.threadCount()
                    continue
                }
                let deadline = ContinuousClock.now + .seconds(10)
                while DaemonThreadsTests.threadCount() > baseline {
                    if ContinuousClock.now > deadline { exit(4) }
                    try? await Task.sleep(for: .milliseconds(10))  // a pause between checks of the condition
                }
            }
            exit(0)
        }
    }

    static func threadCount() -> Int {
        guard let directory = opendir("/proc/self/task") else { return -1 }
        defer { closedir(directory) }
        var count = 0
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != ".", name != ".." { count += 1 }
        }
        return count
    }
}
