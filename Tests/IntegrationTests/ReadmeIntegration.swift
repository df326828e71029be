import Foundation
import SceneSyncCore

/// The README's "Integrating your app" blocks and the `readme-integration` example that holds them
/// (Examples/ReadmeIntegration): the blocks, the marked regions, running the example and reading its report.
enum ReadmeIntegration {
    static let heading = "Integrating your app"

    /// Where each of the section's swift blocks is kept, in the README's order.
    struct Region {
        var name: String
        var file: String
    }

    static let regions = [
        Region(name: "ScenePath", file: "Examples/ReadmeIntegration/main.swift"),
        Region(name: "SceneFile", file: "Examples/ReadmeIntegration/SceneFileBlock.swift"),
    ]

    /// The section's swift blocks; there must be one per region.
    static func blocks(_ readme: Readme) throws -> [String] {
        let blocks = try readme.section(heading).blocks.filter { $0.language == "swift" }.map(\.code)
        guard blocks.count == regions.count else {
            throw Readme.Problem(
                "\"\(heading)\" has \(blocks.count) ```swift blocks; the readme-integration example holds "
                    + "\(regions.count) (\(regions.map(\.name).joined(separator: ", "))): add or remove its regions "
                    + "and ReadmeIntegration.regions")
        }
        return blocks
    }

    /// The lines between `// README: begin <name>` and `// README: end <name>`, without the begin marker's
    /// indentation.
    static func markedRegion(_ region: Region) throws -> String {
        let path = BuiltProducts.packageRoot.appendingPathComponent(region.file).path
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(
            separator: "\n", omittingEmptySubsequences: false)
        guard let begin = lines.firstIndex(where: { $0.hasSuffix("// README: begin \(region.name)") }),
            let end = lines.firstIndex(where: { $0.hasSuffix("// README: end \(region.name)") }), begin < end
        else { throw Readme.Problem("\(region.file) has no region marked \"// README: begin/end \(region.name)\"") }
        let indentation = String(lines[begin].prefix { $0 == " " })
        return lines[(begin + 1)..<end].map { line in
            line.hasPrefix(indentation) ? String(line.dropFirst(indentation.count)) + "\n" : String(line) + "\n"
        }.joined()
    }

    /// Runs the example (`arguments` choose the block) as the session's user; it must exit with 0. Returns its
    /// report: the scene, the routes' tag and the routes it wrote (and, for `SceneFile`, the directory).
    static func run(in session: UserSession, _ arguments: [String] = []) async throws -> JSONValue {
        let output = session.root.path + "/readme-integration.out"
        let process = try session.spawn(
            session.executables.path("readme-integration"), arguments, stdout: .file(output))
        let status = try await process.exit(timeout: .seconds(120))
        let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        guard status == .exited(0) else {
            throw ReadmeTests.Failure(
                "readme-integration \(arguments.joined(separator: " ")) ended with \(status):\n\(text)")
        }
        guard let line = text.split(separator: "\n").last(where: { $0.hasPrefix("report: ") }) else {
            throw ReadmeTests.Failure("readme-integration printed no report:\n\(text)")
        }
        return try json(String(line.dropFirst("report: ".count)))
    }

    /// The scene's path on the wire that the report describes: each route as an element tagged with the report's
    /// tag, root first.
    static func wirePath(_ report: JSONValue) throws -> JSONValue {
        guard let tag = report["tag"], let routes = report["routes"]?.arrayValue else {
            throw ReadmeTests.Failure("readme-integration's report lacks its tag or routes: \(report)")
        }
        return .array(routes.map { .object(JSONObject([("type", tag), ("value", $0)])) })
    }
}
