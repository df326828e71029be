import Foundation

/// The real `scenesync` binary, run the way an operator or a script runs it.
///
/// One-shot commands go through ``run(_:stdin:environment:timeout:)``, which collects both output streams in files
/// (so a chatty command can never stall on a full pipe) and kills the command if it outlives its timeout. A
/// long-running `watch` is started with ``start(_:environment:)`` and read line by line with timeouts: tests wait for
/// the line they expect, never for a fixed time. The timeouts only stop a broken test from hanging, so they are long:
/// the whole suite on two cores can keep a process waiting for many seconds.
final class CLIProcess: @unchecked Sendable {
    struct Result: Sendable, CustomStringConvertible {
        var status: Int32
        var stdout: String
        var stderr: String

        /// Standard output split into lines, without the empty string after the last newline.
        var lines: [String] {
            stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
        }

        var description: String { "status \(status)\nstdout:\n\(stdout)\nstderr:\n\(stderr)" }
    }

    /// The environment commands run in: the test runner's, without a socket override that would make a test pass by
    /// accident, plus `extra`.
    static func environment(_ extra: [String: String]) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["SCENESYNC_SOCKET"] = nil
        environment["SCENESYNCD_SOCKET_PATH"] = nil
        environment.merge(extra) { $1 }
        return environment
    }

    /// Runs `scenesync arguments…` to completion.
    static func run(
        _ arguments: [String], stdin: String? = nil, environment extra: [String: String] = [:],
        timeout: Duration = .seconds(120)
    ) async throws -> Result {
        let scratch = try TemporaryDirectory("cli")
        defer { scratch.remove() }
        let outURL = scratch.appending("out")
        let errURL = scratch.appending("err")
        let inURL = scratch.appending("in")
        for url in [outURL, errURL, inURL] { _ = FileManager.default.createFile(atPath: url.path, contents: nil) }
        if let stdin { try Data(stdin.utf8).write(to: inURL) }
        let out = try FileHandle(forWritingTo: outURL)
        let err = try FileHandle(forWritingTo: errURL)
        let input = try FileHandle(forReadingFrom: inURL)
        defer {
            try? out.close()
            try? err.close()
            try? input.close()
        }
        let process = Process()
        process.executableURL = BuiltProducts.scenesync
        process.arguments = arguments
        process.environment = environment(extra)
        process.standardInput = input
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let deadline = ContinuousClock.now + timeout
        while process.isRunning {
            if ContinuousClock.now >= deadline {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
                throw CLIError.timedOut(arguments)
            }
            // Polling the child's state, not timing the command: its exit is seen as soon as it happens. Sleeping
            // (rather than blocking) leaves the test runner's few threads to the tests that run meanwhile.
            try await Task.sleep(for: .milliseconds(2))
        }
        process.waitUntilExit()
        return Result(
            status: process.terminationStatus,
            stdout: (try? String(contentsOf: outURL, encoding: .utf8)) ?? "",
            stderr: (try? String(contentsOf: errURL, encoding: .utf8)) ?? "")
    }

    // MARK: - Long-running commands

    let process: Process
    private let output: FileHandle
    private let errorURL: URL
    private let scratch: TemporaryDirectory
    private var buffer: [UInt8] = []
    /// Every line read so far, for failure messages.
    private(set) var transcript: [String] = []

    private init(process: Process, output: FileHandle, errorURL: URL, scratch: TemporaryDirectory) {
        self.process = process
        self.output = output
        self.errorURL = errorURL
        self.scratch = scratch
    }

    /// Starts `scenesync arguments…` with its standard output on a pipe this object reads.
    static func start(_ arguments: [String], environment extra: [String: String] = [:]) throws -> CLIProcess {
        let scratch = try TemporaryDirectory("cli")
        let errorURL = scratch.appending("err")
        _ = FileManager.default.createFile(atPath: errorURL.path, contents: nil)
        let process = Process()
        process.executableURL = BuiltProducts.scenesync
        process.arguments = arguments
        process.environment = environment(extra)
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = try FileHandle(forWritingTo: errorURL)
        process.standardInput = FileHandle.nullDevice
        try process.run()
        try? pipe.fileHandleForWriting.close()
        return CLIProcess(process: process, output: pipe.fileHandleForReading, errorURL: errorURL, scratch: scratch)
    }

    var stderrText: String { (try? String(contentsOf: errorURL, encoding: .utf8)) ?? "" }

    /// The next line of standard output; throws at EOF or when none arrives in time.
    func nextLine(timeout: Duration = .seconds(120)) async throws -> String {
        let deadline = ContinuousClock.now + timeout
        let fd = output.fileDescriptor
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeFirst(newline + 1)
                transcript.append(line)
                return line
            }
            let remaining = deadline - ContinuousClock.now
            guard remaining > .zero else { throw CLIError.noLine(transcript: transcript, stderr: stderrText) }
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            if poll(&descriptor, 1, 0) <= 0 {
                try await Task.sleep(for: .milliseconds(5))
                continue
            }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { throw CLIError.endOfOutput(transcript: transcript, stderr: stderrText) }
            buffer.append(contentsOf: chunk[0..<count])
        }
    }

    /// Lines up to and including the first one that satisfies `predicate`.
    @discardableResult
    func lines(
        until predicate: (String) -> Bool, timeout: Duration = .seconds(120)
    ) async throws -> [String] {
        let deadline = ContinuousClock.now + timeout
        var lines: [String] = []
        while true {
            let line = try await nextLine(timeout: deadline - ContinuousClock.now)
            lines.append(line)
            if predicate(line) { return lines }
        }
    }

    /// Lines up to and including the first that starts with `prefix`.
    @discardableResult
    func lines(untilPrefix prefix: String, timeout: Duration = .seconds(120)) async throws -> [String] {
        try await lines(until: { $0.hasPrefix(prefix) }, timeout: timeout)
    }

    /// Stops reading standard output, like `head` does after its lines.
    func closeOutput() {
        try? output.close()
    }

    func signal(_ number: Int32) {
        if process.isRunning { kill(process.processIdentifier, number) }
    }

    /// Waits for the exit status; kills the command if it does not exit in time.
    func waitForExit(timeout: Duration = .seconds(120)) async throws -> Int32 {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning {
            guard ContinuousClock.now < deadline else {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
                throw CLIError.didNotExit(transcript: transcript, stderr: stderrText)
            }
            try await Task.sleep(for: .milliseconds(2))
        }
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// Kills the command if it still runs and removes its scratch files.
    func cleanup() {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        closeOutput()
        scratch.remove()
    }

    enum CLIError: Error, CustomStringConvertible {
        case timedOut([String])
        case noLine(transcript: [String], stderr: String)
        case endOfOutput(transcript: [String], stderr: String)
        case didNotExit(transcript: [String], stderr: String)

        var description: String {
            switch self {
            case .timedOut(let arguments): "scenesync \(arguments.joined(separator: " ")) did not finish in time"
            case .noLine(let transcript, let stderr):
                "no line in time; so far:\n\(transcript.joined(separator: "\n"))\nstderr:\n\(stderr)"
            case .endOfOutput(let transcript, let stderr):
                "output ended; so far:\n\(transcript.joined(separator: "\n"))\nstderr:\n\(stderr)"
            case .didNotExit(let transcript, let stderr):
                "did not exit; output:\n\(transcript.joined(separator: "\n"))\nstderr:\n\(stderr)"
            }
        }
    }
}
