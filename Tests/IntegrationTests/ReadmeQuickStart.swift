import Foundation

/// The README's quick start from a clone, found by its place in the section "Quick start, as your own user".
///
/// What the test relies on, in order: a paragraph with **From a clone**, then a ```` ```sh ```` block that runs
/// `make run` (the test starts the daemon and puts the built binaries on `PATH` in its place), then one or more
/// ```` ```sh ```` blocks, which are run; then a paragraph ending "`watch` prints:" and a plain block with what
/// `watch` prints (`…` for what varies, such as the epoch); then, in the prose after it, "the file holds `…`" with
/// the scene file's content after the push, which the commands `cat`.
struct ReadmeQuickStart {
    static let heading = "Quick start, as your own user"

    /// The commands, as written.
    var script: String
    /// What `watch` prints, line by line.
    var watchOutput: [String]
    /// The scene file's content after the push.
    var fileAfterPush: String

    init(_ readme: Readme) throws {
        let section = try readme.section(Self.heading)
        let blocks = section.blocks
        guard let start = blocks.firstIndex(where: { $0.before.contains("**From a clone**") }),
            blocks[start].language == "sh", blocks[start].code.contains("make run")
        else {
            throw Readme.Problem(
                "\"\(Self.heading)\": expected a paragraph with **From a clone** followed by a ```sh block that runs "
                    + "`make run`, which ReadmeTests replaces by its own daemon")
        }
        guard let output = blocks.firstIndex(where: { $0.before.contains("`watch` prints:") }), output > start + 1
        else {
            throw Readme.Problem(
                "\"\(Self.heading)\": expected, after the `make run` block, ```sh blocks with the commands, then a "
                    + "paragraph ending \"`watch` prints:\" and a block with that output")
        }
        let commands = blocks[(start + 1)..<output]
        guard commands.allSatisfy({ $0.language == "sh" }) else {
            throw Readme.Problem(
                "\"\(Self.heading)\": every block between the `make run` block and \"`watch` prints:\" must be "
                    + "```sh: ReadmeTests runs them")
        }
        script = commands.map(\.code).joined()
        watchOutput = blocks[output].code.split(separator: "\n").map(String.init)
        let after = blocks[output].after
        let marker = "the file holds `"
        guard let open = after.range(of: marker), let close = after[open.upperBound...].firstIndex(of: "`") else {
            throw Readme.Problem(
                "\"\(Self.heading)\": expected \"\(marker)…`\" after the `watch` output, with the file's content")
        }
        fileAfterPush = String(after[open.upperBound..<close])
    }

    /// The script cut after each line that starts `scenesync watch` in the background: a person at a terminal
    /// types the next command once `watch` printed its first line, and so does the test.
    var parts: [(text: String, startsWatch: Bool)] {
        var parts: [(String, Bool)] = []
        var current = ""
        for line in script.split(separator: "\n", omittingEmptySubsequences: false).dropLast() {
            current += line + "\n"
            let command = line.prefix { $0 != "#" }.trimmingCharacters(in: .whitespaces)
            if command.hasPrefix("scenesync watch"), command.hasSuffix("&") {
                parts.append((current, true))
                current = ""
            }
        }
        parts.append((current, false))
        return parts
    }

    /// Whether `line` is one of `watch`'s: its catch-up line or an event's.
    static func isWatchLine(_ line: String) -> Bool {
        line.hasPrefix("-- ") || (line.first == "r" && line.dropFirst().prefix { $0 != " " }.allSatisfy(\.isNumber))
    }

    /// Whether `line` is `expected`, where each `…` in `expected` stands for one or more characters.
    static func matches(_ line: String, _ expected: String) -> Bool {
        let pieces = expected.components(separatedBy: "…")
        guard pieces.count > 1 else { return line == expected }
        guard line.hasPrefix(pieces[0]) else { return false }
        var rest = line.dropFirst(pieces[0].count)
        for piece in pieces.dropFirst().dropLast() {
            guard !rest.isEmpty, let found = rest.dropFirst().range(of: piece) else { return false }
            rest = rest[found.upperBound...]
        }
        let last = pieces[pieces.count - 1]
        return rest.count > last.count && rest.hasSuffix(last)
    }
}
