import Foundation

/// Runs a host tool (`systemd-analyze`, `systemd-nspawn`) to completion under a hard timeout.
///
/// Standard output and standard error go to one temporary file, so they keep their relative order and a chatty tool
/// can never stall on a full pipe while nobody reads it.
enum HostCommand {
    struct Result: Sendable {
        /// The exit status, or the signal number when the tool was killed by one (see `timedOut`).
        var status: Int32
        /// Standard output and standard error, interleaved as written.
        var output: String
        /// The tool ran out of time and was killed.
        var timedOut: Bool
    }

    /// The executable called `name` in `PATH` or the usual system directories, which a test runner's `PATH` may
    /// lack.
    static func find(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let directories = path.split(separator: ":").map(String.init) + ["/usr/bin", "/usr/sbin", "/bin", "/sbin"]
        return directories.map { $0 + "/" + name }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Runs `executable` and waits for it; after `timeout` it gets SIGTERM, five seconds later SIGKILL.
    static func run(
        _ executable: String,
        _ arguments: [String],
        timeout: Duration = .seconds(60),
        in directory: URL? = nil
    ) async throws -> Result {
        let outputURL = FileManager.default.temporaryDirectory.appendingPathComponent("cmd-\(UUID().uuidString)")
        guard FileManager.default.createFile(atPath: outputURL.path, contents: nil) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: outputURL.path])
        }
        defer { try? FileManager.default.removeItem(at: outputURL) }
        let output = try FileHandle(forWritingTo: outputURL)
        defer { try? output.close() }

        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = output
        process.standardError = output
        if let directory { process.currentDirectoryURL = directory }
        try process.run()

        let clock = ContinuousClock()
        var deadline = clock.now + timeout
        var timedOut = false
        while process.isRunning {
            if clock.now >= deadline {
                if timedOut {
                    kill(process.processIdentifier, SIGKILL)
                } else {
                    timedOut = true
                    process.terminate()
                    deadline = clock.now + .seconds(5)
                }
            }
            try? await Task.sleep(for: .milliseconds(20))
        }
        process.waitUntilExit()
        let text = (try? String(contentsOf: outputURL, encoding: .utf8)) ?? ""
        return Result(status: process.terminationStatus, output: text, timedOut: timedOut)
    }
}
