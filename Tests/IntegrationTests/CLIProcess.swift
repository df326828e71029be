import Foundation

/// The real `scenesync` binary, run the way an operator or a script runs it.
///
/// One-shot commands go through ``run(_:stdin:environment:timeout:)``, which collects both output streams in files
/// (so a chatty command can never stall on a full pipe) and kills the command if it outlives its timeout. A
/// long-running `watch` is started with ``start(_:environment:)`` and read line by line with timeouts: tests wait for
/// the line they expect, never for a fixed time. Both run as a ``ChildProcess``; nothing here blocks the
/// cooperative pool. The timeouts only stop a broken test from hanging, so they are long:
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

    /// Runs `scenesync arguments…` (or another of the built executables) to completion.
    static func run(
        _ arguments: [String], stdin: String? = nil, environment extra: [String: String] = [:],
        timeout: Duration = .seconds(120), executable: URL = BuiltProducts.scenesync
    ) async throws -> Result {
        let scratch = try TemporaryDirectory("cli")
        defer { scratch.remove() }
        let outURL = scratch.appending("out")
        let errURL = scratch.appending("err")
        let inURL = scratch.appending("in")
        try Data((stdin ?? "").utf8).write(to: inURL)
        let process = try ChildProcess(
            executable.path, arguments, environment: environment(extra), stdin: .file(inURL.path),
            stdout: .file(outURL.path), stderr: .file(errURL.path))
        let termination: ChildProcess.Termination
        do {
            termination = try await process.exit(timeout: timeout)
        } catch is WaitTimeout {
            throw CLIError.timedOut(arguments)
        }
        return Result(
            status: termination.status,
            stdout: (try? String(contentsOf: outURL, encoding: .utf8)) ?? "",
            stderr: (try? String(contentsOf: errURL, encoding: .utf8)) ?? "")
    }

    // MARK: - Long-running commands

    let process: ChildProcess
    private let output: LineReader
    private let errorURL: URL
    private let scratch: TemporaryDirectory
    /// Every line read so far, for failure messages.
    private(set) var transcript: [String] = []
    private var outputClosed = false

    private init(process: ChildProcess, output: Int32, errorURL: URL, scratch: TemporaryDirectory) {
        self.process = process
        self.output = LineReader(fd: output)
        self.errorURL = errorURL
        self.scratch = scratch
    }

    deinit { closeOutput() }

    /// Starts `scenesync arguments…` (or another of the built executables) with its standard output on a pipe this
    /// object reads, and its standard input on `stdin` (a descriptor the caller writes to) when given.
    static func start(
        _ arguments: [String], environment extra: [String: String] = [:], stdin: Int32? = nil,
        executable: URL = BuiltProducts.scenesync
    ) throws -> CLIProcess {
        let scratch = try TemporaryDirectory("cli")
        let errorURL = scratch.appending("err")
        let pipe = try makePipe()
        defer { close(pipe.write) }
        let process: ChildProcess
        do {
            process = try ChildProcess(
                executable.path, arguments, environment: environment(extra),
                stdin: stdin.map { .descriptor($0) } ?? .null, stdout: .descriptor(pipe.write),
                stderr: .file(errorURL.path))
        } catch {
            close(pipe.read)
            throw error
        }
        return CLIProcess(process: process, output: pipe.read, errorURL: errorURL, scratch: scratch)
    }

    var stderrText: String { (try? String(contentsOf: errorURL, encoding: .utf8)) ?? "" }

    /// The next line of standard output; throws at EOF or when none arrives in time.
    func nextLine(timeout: Duration = .seconds(120)) async throws -> String {
        let line: String?
        do {
            line = try await output.readLine(until: .now + timeout, "")
        } catch is WaitTimeout {
            throw CLIError.noLine(transcript: transcript, stderr: stderrText)
        }
        guard let line else { throw CLIError.endOfOutput(transcript: transcript, stderr: stderrText) }
        transcript.append(line)
        return line
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
        guard !outputClosed else { return }
        outputClosed = true
        close(output.fd)
    }

    func signal(_ number: Int32) {
        process.signal(number)
    }

    /// Waits for the termination; kills the command if it does not exit in time.
    func termination(timeout: Duration = .seconds(120)) async throws -> ChildProcess.Termination {
        do {
            return try await process.exit(timeout: timeout)
        } catch is WaitTimeout {
            throw CLIError.didNotExit(transcript: transcript, stderr: stderrText)
        }
    }

    /// Waits for the exit status (the signal number for a death by signal); kills the command if it does not exit
    /// in time.
    func waitForExit(timeout: Duration = .seconds(120)) async throws -> Int32 {
        try await termination(timeout: timeout).status
    }

    /// Kills the command if it still runs and removes its scratch files.
    func cleanup() {
        process.signal(SIGKILL)
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
