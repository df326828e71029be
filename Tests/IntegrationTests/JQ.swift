import Foundation

/// `jq`, to prove that `--json` output is JSON that ordinary tools read (installed by `scripts/install-deps.sh
/// test`).
enum JQ {
    static var path: String? { HostCommand.find("jq") }

    /// Runs `jq -c filter` on `input`; returns its status and output.
    static func run(_ filter: String, on input: String) async throws -> (status: Int32, output: String) {
        guard let path else { throw JQError.missing }
        let scratch = try TemporaryDirectory("jq")
        defer { scratch.remove() }
        let inURL = scratch.appending("in")
        let outURL = scratch.appending("out")
        try Data(input.utf8).write(to: inURL)
        let process = try ChildProcess(
            path, ["-e", "-c", filter], environment: ProcessInfo.processInfo.environment, stdin: .file(inURL.path),
            stdout: .file(outURL.path))
        let termination = try await process.exit(timeout: .seconds(60))
        return (termination.status, (try? String(contentsOf: outURL, encoding: .utf8)) ?? "")
    }

    enum JQError: Error, CustomStringConvertible {
        case missing
        var description: String { "jq is not installed (scripts/install-deps.sh test installs it)" }
    }
}
