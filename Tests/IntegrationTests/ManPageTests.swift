import Foundation
import Testing

/// The man pages that `make man` generates from the argument parsers: they render with `man -l` and name every
/// option and command that `--help` shows, so they cannot drift from the binaries.
@Suite struct ManPageTests {
    static let pages = ["scenesyncd.8", "scenesync.1"]

    /// The page as `man -l` renders it, in plain ASCII (no hyphen glyphs, no overstrike) on wide lines.
    static func render(_ page: String) async throws -> HostCommand.Result {
        // The page itself, as `make man` writes it: not the package, which a page does not need.
        try await Packaging.requireUpToDate(".build-release/dist/man/\(page)")
        let env = try #require(HostCommand.find("env"), "env not found")
        let man = try #require(HostCommand.find("man"), "man not found: install man-db (scripts/install-deps.sh test)")
        let path = Packaging.dist.appendingPathComponent("man/\(page)").path
        return try await HostCommand.run(
            env, ["LC_ALL=C", "MANWIDTH=200", "MAN_KEEP_FORMATTING=", man, "--warnings", "-l", "-P", "cat", path])
    }

    /// Every `--long` and `-s` option in a `--help` text.
    static func options(inHelp help: String) -> Set<String> {
        Set(help.matches(of: /(?:^|[\s,\[(|])(--?[A-Za-z][\w-]*)/.anchorsMatchLineEndings()).map { String($0.1) })
    }

    /// The subcommands a `--help` text lists under SUBCOMMANDS.
    static func subcommands(inHelp help: String) -> [String] {
        guard let start = help.range(of: "SUBCOMMANDS:\n") else { return [] }
        // Each command line is its name, then its abstract; the list ends at the first line that is not indented
        // ("  See 'scenesync help <subcommand>'…" follows after an empty line).
        return help[start.upperBound...].split(separator: "\n", omittingEmptySubsequences: false)
            .prefix { $0.hasPrefix("  ") }.compactMap { line in line.split(separator: " ").first.map(String.init) }
            .filter { $0 != "help" }
    }

    static func help(_ binary: URL, _ arguments: [String]) async throws -> String {
        let result = try await HostCommand.run(binary.path, arguments + ["--help"])
        #expect(result.status == 0, "\(binary.lastPathComponent) \(arguments) --help failed:\n\(result.output)")
        return result.output
    }

    @Test(arguments: pages) func pageRendersWithoutWarnings(page: String) async throws {
        let result = try await Self.render(page)
        #expect(result.status == 0, "man -l \(page):\n\(result.output)")
        let name = String(page.prefix { $0 != "." })
        let section = String(page.drop { $0 != "." }.dropFirst())
        #expect(result.output.hasPrefix("\(name.uppercased())(\(section))"), "\(result.output.prefix(300))")
        for heading in ["NAME", "SYNOPSIS", "DESCRIPTION"] {
            #expect(result.output.contains("\n\(heading)\n"), "no \(heading) in \(page):\n\(result.output)")
        }
        // groff's warnings (with --warnings) go to the same output; a clean page has none.
        #expect(!result.output.contains("warning:"), "\(result.output)")
    }

    @Test func daemonPageNamesEveryOptionOfHelp() async throws {
        let page = try await Self.render("scenesyncd.8").output
        let help = try await Self.help(BuiltProducts.scenesyncd, [])
        let options = Self.options(inHelp: help)
        #expect(options.isSuperset(of: ["--config", "--scenes-dir", "--state-dir", "--socket", "--check-config"]))
        for option in options.sorted() {
            #expect(page.contains(option), "scenesyncd(8) lacks \(option), which --help shows")
        }
    }

    @Test func cliPageNamesEveryCommandAndOptionOfHelp() async throws {
        let page = try await Self.render("scenesync.1").output
        let root = try await Self.help(BuiltProducts.scenesync, [])
        let commands = Self.subcommands(inHelp: root)
        #expect(commands.count >= 12, "subcommands in --help:\n\(root)")
        var options = Self.options(inHelp: root)
        for command in commands {
            #expect(page.contains(command), "scenesync(1) lacks the command \(command)")
            options.formUnion(Self.options(inHelp: try await Self.help(BuiltProducts.scenesync, [command])))
        }
        #expect(options.isSuperset(of: ["--socket", "--json", "--since", "--if-version", "--type", "--wire"]))
        for option in options.sorted() {
            #expect(page.contains(option), "scenesync(1) lacks \(option), which --help shows")
        }
    }
}
