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
        let scratch = try TemporaryDirectory("cmd")
        defer { scratch.remove() }
        let outputPath = scratch.appending("out").path
        let process = try ChildProcess(
            executable, arguments, environment: ProcessInfo.processInfo.environment, stdout: .file(outputPath),
            directory: directory?.path)
        var timedOut = false
        var termination = try await process.termination(within: timeout)
        if termination == nil {
            timedOut = true
            process.signal(SIGTERM)
            termination = try await process.termination(within: .seconds(5))
        }
        if termination == nil {
            process.signal(SIGKILL)
            termination = try await process.exit(timeout: .seconds(30), "after SIGKILL")
        }
        let status = termination?.status ?? -1
        let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        return Result(status: status, output: text, timedOut: timedOut)
    }
}
