import Foundation
import Testing

@testable import SceneSyncCore

/// The client's reader of `scenes.directory` in the daemon's configuration file: what it reads, and what it refuses
/// rather than guess. The daemon's tests check the same files against the daemon's own loader.
@Suite struct ScenesDirectoryFileTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var yaml: String
        /// The directory read, `nil` for none.
        var directory: String?
        var testDescription: String { name }
    }

    struct Refusal: Sendable, CustomTestStringConvertible {
        var name: String
        var yaml: String
        /// The line the problem is reported on.
        var line: Int?
        var testDescription: String { name }
    }

    static let shippedFile = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("config/scenesyncd.yaml").path

    func read(_ yaml: String) throws(ScenesDirectory.Problem) -> String? {
        try ScenesDirectory.configured(inConfigurationFile: Array(yaml.utf8))
    }

    static let cases: [Case] = [
        Case(name: "empty", yaml: "", directory: nil),
        Case(name: "comments only", yaml: "# nothing\n\n   # here\n", directory: nil),
        Case(name: "block", yaml: "scenes:\n  directory: /srv/scenes\n", directory: "/srv/scenes"),
        Case(name: "normalized", yaml: "scenes:\n    directory: /srv//a/./b/\n", directory: "/srv/a/b"),
        Case(
            name: "comments around", yaml: "scenes:  # files\n  # where\n  directory: /srv/a # there\n\n",
            directory: "/srv/a"),
        Case(name: "a # inside a plain value", yaml: "scenes:\n  directory: /srv/a#b\n", directory: "/srv/a#b"),
        Case(name: "a colon inside a plain value", yaml: "scenes:\n  directory: /srv/a:b\n", directory: "/srv/a:b"),
        Case(
            name: "double quoted", yaml: "scenes:\n  directory: \"/srv/with space/\\u00e9\\t\" # c\n",
            directory: "/srv/with space/\u{e9}\t"),
        Case(name: "single quoted", yaml: "scenes:\n  directory: '/srv/it''s'\n", directory: "/srv/it's"),
        Case(name: "quoted key", yaml: "\"scenes\":\n  'directory': /srv/q\n", directory: "/srv/q"),
        Case(name: "flow section", yaml: "scenes: {format: auto, directory: /srv/f}\n", directory: "/srv/f"),
        Case(name: "flow section without it", yaml: "scenes: {format: auto}\n", directory: nil),
        Case(name: "empty section", yaml: "scenes:\nstate:\n  directory: /srv/state\n", directory: nil),
        Case(
            name: "other sections, lists and nesting",
            yaml: """
                log:
                  level: info
                access:
                  write_uids: [1000, 1001]
                  write_gids:
                    - 5
                    - 6
                cluster: {postgres: "postgres://a@b/c", scenes: ["com.*", '*x']}
                scenes:
                  format: auto
                  directory: /srv/last
                  max_depth: 10
                socket:
                  mode: "0660"

                """,
            directory: "/srv/last"),
        Case(
            name: "continued values elsewhere",
            yaml:
                "cluster:\n  host: one\n    \"two\n  schema: |\n    scenes:\n      \"x\nscenes:\n  directory: /srv/c\n",
            directory: "/srv/c"),
        Case(name: "state.directory is not it", yaml: "state:\n  directory: /srv/state\n", directory: nil),
        Case(
            name: "document start and CRLF", yaml: "--- # doc\r\nscenes:\r\n  directory: /srv/w\r\n",
            directory: "/srv/w"),
        Case(name: "BOM", yaml: "\u{FEFF}scenes:\n  directory: /srv/b\n", directory: "/srv/b"),
    ]

    @Test(arguments: cases)
    func reads(_ example: Case) throws {
        #expect(try read(example.yaml) == example.directory)
    }

    static let refusals: [Refusal] = [
        Refusal(name: "relative", yaml: "scenes:\n  directory: scenes\n", line: 2),
        Refusal(name: "no value", yaml: "scenes:\n  directory:\n", line: 2),
        Refusal(name: "value on the next line", yaml: "scenes:\n  directory:\n    /srv/next\n", line: 2),
        Refusal(name: "null", yaml: "scenes:\n  directory: ~\n", line: 2),
        Refusal(name: "empty quoted", yaml: "scenes:\n  directory: \"\"\n", line: 2),
        Refusal(name: "plain continued", yaml: "scenes:\n  directory: /srv/a\n\n    b\n", line: 4),
        Refusal(name: "quote left open", yaml: "scenes:\n  directory: \"/srv/a\n    b\"\n", line: 2),
        Refusal(name: "block scalar", yaml: "scenes:\n  directory: |\n    /srv/a\n", line: 2),
        Refusal(name: "a list", yaml: "scenes:\n  directory: [/srv/a]\n", line: 2),
        Refusal(name: "anchor", yaml: "scenes:\n  directory: &d /srv/a\n", line: 2),
        Refusal(name: "alias", yaml: "x: &d /srv/a\nscenes:\n  directory: *d\n", line: 1),
        Refusal(name: "tag", yaml: "scenes:\n  directory: !!str /srv/a\n", line: 2),
        Refusal(name: "flow left open elsewhere", yaml: "cluster: {scenes: [\n  \"*\"]}\nscenes:\n", line: 1),
        Refusal(name: "quote left open elsewhere", yaml: "log:\n  level: \"in\nscenes: fo\"\n", line: 2),
        Refusal(name: "tab indentation", yaml: "scenes:\n\tdirectory: /srv/a\n", line: 2),
        Refusal(name: "two documents", yaml: "scenes:\n---\nscenes:\n  directory: /srv/a\n", line: 2),
        Refusal(name: "document end", yaml: "log:\n...\n", line: 2),
        Refusal(name: "directive", yaml: "%YAML 1.1\n---\n", line: 1),
        Refusal(name: "twice", yaml: "scenes:\n  directory: /a\n  directory: /b\n", line: 3),
        Refusal(name: "section twice", yaml: "scenes:\nscenes:\n", line: 2),
        Refusal(name: "section not a mapping", yaml: "scenes: /srv/a\n", line: 1),
        Refusal(name: "root not a mapping", yaml: "- scenes\n", line: 1),
        Refusal(name: "indented root", yaml: "  scenes:\n    directory: /srv/a\n", line: 1),
        Refusal(name: "a colon and space in a value", yaml: "scenes:\n  directory: /a: b\n", line: 2),
        Refusal(name: "a list in the section", yaml: "scenes:\n  - directory: /a\n", line: 2),
    ]

    @Test(arguments: refusals)
    func refuses(_ example: Refusal) {
        #expect {
            _ = try read(example.yaml)
        } throws: { error in
            (error as? ScenesDirectory.Problem)?.line == example.line
        }
    }

    @Test func notUTF8IsRefused() {
        #expect(throws: ScenesDirectory.Problem("the file is not UTF-8 text")) {
            try ScenesDirectory.configured(inConfigurationFile: Array("scenes:\n  directory: /a".utf8) + [0xFF])
        }
    }

    /// The file the package installs reads as "not set", and as its documented default once uncommented.
    @Test func theShippedFile() throws {
        let text = try String(contentsOfFile: Self.shippedFile, encoding: .utf8)
        #expect(try read(text) == nil)
        let commented = "  # directory: /run/scenesync/scenes\n"
        try #require(text.contains(commented))
        let uncommented = text.replacingOccurrences(of: commented, with: "  directory: /run/scenesync/scenes\n")
        #expect(try read(uncommented) == "/run/scenesync/scenes")
    }
}
