import Foundation

/// `jq`, to prove that `--json` output is JSON that ordinary tools read (installed by `scripts/install-deps.sh
/// test`).
enum JQ {
    static var path: String? { HostCommand.find("jq") }

    /// Runs `jq -c filter` on `input`; returns its status and output.
    static func run(_ filter: String, on input: String) throws -> (status: Int32, output: String) {
        guard let path else { throw JQError.missing }
        let scratch = try TemporaryDirectory("jq")
        defer { scratch.remove() }
        let inURL = scratch.appending("in")
        let outURL = scratch.appending("out")
        try Data(input.utf8).write(to: inURL)
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        let input = try FileHandle(forReadingFrom: inURL)
        let output = try FileHandle(forWritingTo: outURL)
        defer {
            try? input.close()
            try? output.close()
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = ["-e", "-c", filter]
        process.standardInput = input
        process.standardOutput = output
        process.standardError = output
        try process.run()
        process.waitUntilExit()
        return (process.terminationStatus, (try? String(contentsOf: outURL, encoding: .utf8)) ?? "")
    }

    enum JQError: Error, CustomStringConvertible {
        case missing
        var description: String { "jq is not installed (scripts/install-deps.sh test installs it)" }
    }
}
