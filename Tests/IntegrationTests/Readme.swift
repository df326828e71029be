import Foundation

/// The README's sections and their fenced code blocks, so that tests can run what it shows as written.
///
/// A section is what follows a `## ` heading up to the next one; its blocks are the fenced ones (```` ```sh ````,
/// ```` ```swift ````, ```` ``` ````), each with the prose between it and the block (or heading) before it, which
/// is how a test finds a block by its place ("the block after **From a clone**"). Where the README no longer has
/// the shape a test relies on, ``Problem`` says what was expected, so that the README and the test can be brought
/// back together.
struct Readme {
    struct Block {
        /// The info string: `sh`, `swift`, or empty.
        var language: String
        /// The lines between the fences, each ending in a newline.
        var code: String
        /// The prose since the previous block or the heading.
        var before: String
        /// The prose after the block, up to the next block or the end of the section.
        var after: String
    }

    struct Section {
        var heading: String
        var blocks: [Block]
    }

    struct Problem: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = "README.md: " + description }
    }

    static let path = BuiltProducts.packageRoot.appendingPathComponent("README.md").path

    let sections: [Section]

    init(text: String) {
        var sections: [Section] = []
        var prose = ""
        var fence: (language: String, code: String)?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if var open = fence {
                if line == "```" {
                    let block = Block(language: open.language, code: open.code, before: prose, after: "")
                    sections[sections.count - 1].blocks.append(block)
                    prose = ""
                    fence = nil
                } else {
                    open.code += line + "\n"
                    fence = open
                }
            } else if line.hasPrefix("## ") {
                Self.close(&sections, prose)
                sections.append(Section(heading: String(line.dropFirst(3)), blocks: []))
                prose = ""
            } else if line.hasPrefix("```"), !sections.isEmpty {
                Self.close(&sections, prose)
                fence = (String(line.dropFirst(3)), "")
            } else {
                prose += line + "\n"
            }
        }
        Self.close(&sections, prose)
        self.sections = sections
    }

    static func load() throws -> Readme {
        Readme(text: try String(contentsOfFile: path, encoding: .utf8))
    }

    /// The prose before a block becomes the previous block's `after`.
    private static func close(_ sections: inout [Section], _ prose: String) {
        guard let last = sections.indices.last, let block = sections[last].blocks.indices.last else { return }
        if sections[last].blocks[block].after.isEmpty { sections[last].blocks[block].after = prose }
    }

    func section(_ heading: String) throws -> Section {
        guard let section = sections.first(where: { $0.heading == heading }) else {
            throw Problem("no section \"## \(heading)\"")
        }
        return section
    }
}
