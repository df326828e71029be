extension ScenesDirectory {
    /// `scenes.directory` as the daemon reads it from its configuration file, for a client that links no YAML
    /// library: the path (absolute and normalized), or `nil` when the file does not set it.
    ///
    /// The daemon's loader (Yams, and checks of its own) stays the authority; this reader takes the block style that
    /// `config/scenesyncd.yaml` is written in (sections at the first column, `key: value` lines indented below them,
    /// comments, plain and quoted scalars, flow collections on one line, block sequences and block scalars outside
    /// `scenes.directory`) and refuses, with a ``Problem`` naming the line, what it cannot read with certainty:
    /// a value that runs on into the next lines (an open quote or bracket, a plain `scenes.directory` continued on
    /// the next line), anchors, aliases and tags, directives, several documents, and tabs as indentation. A refusal
    /// is better than a guess: a guessed directory would put scene files where the daemon never looks.
    ///
    /// Where the daemon's loader refuses a file (a relative path, a key with no value), this reader refuses it too
    /// when the problem is in `scenes.directory`; elsewhere in the file it need not, since such a daemon never
    /// starts. The daemon's tests check both readers against each other on the shipped file and on every form
    /// above.
    public static func configured(inConfigurationFile bytes: [UInt8]) throws(Problem) -> String? {
        guard String(validating: bytes, as: UTF8.self) != nil else { throw Problem("the file is not UTF-8 text") }
        var reader = ConfigurationFileReader()
        var start = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        var number = 0
        while start <= bytes.count {
            let end = bytes[start...].firstIndex(of: UInt8(ascii: "\n")) ?? bytes.count
            var line = Array(bytes[start..<end])
            if line.last == UInt8(ascii: "\r") { line.removeLast() }
            number += 1
            try reader.read(line, number: number)
            start = end + 1
        }
        return reader.directory
    }
}

/// The walk over the lines: which section a line is in, and which lines continue a value above them.
private struct ConfigurationFileReader {
    private(set) var directory: String?
    private var section: String?
    private var sawContent = false
    private var sawScenes = false
    private var sawDirectory = false
    /// The indentation of the keys of the `scenes` section, once its first key was read.
    private var scenesKeyIndentation: Int?
    /// Lines indented more than this continue the value above (a plain scalar or a block scalar): their text is
    /// not YAML structure, so they are passed over.
    private var continuationAbove: Int?
    /// Whether the value that lines may continue is `scenes.directory`'s, which must then be refused.
    private var continuesDirectory = false

    mutating func read(_ line: [UInt8], number: Int) throws(ScenesDirectory.Problem) {
        guard let start = line.firstIndex(where: { $0 != UInt8(ascii: " ") && $0 != 9 }) else { return }
        // Comments and blank lines end nothing and start nothing.
        if line[start] == UInt8(ascii: "#") { return }
        let indentation = line.firstIndex { $0 != UInt8(ascii: " ") } ?? line.count
        if let above = continuationAbove {
            if indentation > above {
                guard !continuesDirectory else {
                    throw ScenesDirectory.Problem(
                        line: number, "scenes.directory continues on this line; write the path on one line")
                }
                return
            }
            continuationAbove = nil
            continuesDirectory = false
        }
        guard indentation == start else {
            throw ScenesDirectory.Problem(line: number, "a tab in the indentation (YAML indents with spaces)")
        }
        if indentation == 0, try marker(line, number: number) { return }
        var scanner = ConfigurationLine(line, number: number, start: start)
        let entry = try scanner.entry()
        if indentation == 0 {
            try readSection(entry, number: number)
        } else if section == nil {
            throw ScenesDirectory.Problem(
                line: number, "the sections (scenes:, state:, …) must start at the first column")
        } else if section == "scenes" {
            try readScenesLine(entry, indentation: indentation, number: number)
        } else {
            follow(entry.value, at: indentation)
        }
        sawContent = true
    }

    /// `---` before everything else is the document's start; other markers and directives are refused.
    private mutating func marker(_ line: [UInt8], number: Int) throws(ScenesDirectory.Problem) -> Bool {
        let three = Array(line.prefix(3))
        let isMarker = three == Array("---".utf8) || three == Array("...".utf8)
        if isMarker, line.count == 3 || line[3] == UInt8(ascii: " ") || line[3] == 9 {
            let rest = line.dropFirst(3).drop { $0 == UInt8(ascii: " ") || $0 == 9 }
            guard three == Array("---".utf8), !sawContent, rest.first == nil || rest.first == UInt8(ascii: "#")
            else {
                throw ScenesDirectory.Problem(
                    line: number, "one YAML document is read: only a first \"---\", alone on its line, is allowed")
            }
            sawContent = true
            return true
        }
        if line.first == UInt8(ascii: "%") {
            throw ScenesDirectory.Problem(line: number, "YAML directives (%) are not read here")
        }
        return false
    }

    private mutating func readSection(
        _ entry: ConfigurationLine.Entry, number: Int
    ) throws(ScenesDirectory.Problem) {
        guard entry.sequenceItems == 0, let key = entry.key else {
            throw ScenesDirectory.Problem(line: number, "the file must be a mapping of sections (scenes:, state:, …)")
        }
        section = key
        guard key == "scenes" else {
            follow(entry.value, at: 0)
            return
        }
        guard !sawScenes else { throw ScenesDirectory.Problem(line: number, "scenes: appears twice") }
        sawScenes = true
        switch entry.value {
        case .empty:
            break
        case .plain(let text) where Self.isNull(text):
            break
        case .collection(.mapping(let pairs)):
            for pair in pairs where pair.key == "directory" {
                guard !sawDirectory else {
                    throw ScenesDirectory.Problem(line: number, "scenes.directory appears twice")
                }
                sawDirectory = true
                switch pair.value {
                case .scalar(let text, let quoted): directory = try Self.path(text, quoted: quoted, line: number)
                case .null: throw Self.noValue(line: number)
                default: throw Self.notSingle(line: number)
                }
            }
        default:
            throw ScenesDirectory.Problem(line: number, "scenes: expected a mapping of keys")
        }
    }

    private mutating func readScenesLine(
        _ entry: ConfigurationLine.Entry, indentation: Int, number: Int
    ) throws(ScenesDirectory.Problem) {
        let keys = scenesKeyIndentation ?? indentation
        scenesKeyIndentation = keys
        guard indentation >= keys else {
            throw ScenesDirectory.Problem(line: number, "scenes: a key is indented less than the ones above it")
        }
        guard indentation == keys, entry.key == "directory" else {
            guard indentation > keys || (entry.sequenceItems == 0 && entry.key != nil) else {
                throw ScenesDirectory.Problem(line: number, "scenes: expected a mapping of keys")
            }
            follow(entry.value, at: indentation)
            return
        }
        guard entry.sequenceItems == 0 else {
            throw ScenesDirectory.Problem(line: number, "scenes: expected a mapping of keys")
        }
        guard !sawDirectory else { throw ScenesDirectory.Problem(line: number, "scenes.directory appears twice") }
        sawDirectory = true
        switch entry.value {
        case .plain(let text):
            directory = try Self.path(text, quoted: false, line: number)
            continuationAbove = indentation
            continuesDirectory = true
        case .quoted(let text):
            directory = try Self.path(text, quoted: true, line: number)
        case .empty:
            // The value may stand on the next line in YAML; this reader wants it on the key's.
            throw ScenesDirectory.Problem(
                line: number, "scenes.directory: write the path on the same line as the key")
        case .collection:
            throw Self.notSingle(line: number)
        case .blockScalar:
            throw ScenesDirectory.Problem(
                line: number, "scenes.directory: write the path as a plain or quoted value, not a block scalar")
        }
    }

    /// Marks the lines that may continue `value`, a value of a line indented by `indentation`.
    private mutating func follow(_ value: ConfigurationLine.Value, at indentation: Int) {
        switch value {
        case .plain, .blockScalar: continuationAbove = indentation
        case .empty, .quoted, .collection: break
        }
    }

    /// The daemon's checks of a path in the file (`ConfigurationLayer`), with its words.
    private static func path(_ text: String, quoted: Bool, line: Int) throws(ScenesDirectory.Problem) -> String {
        if !quoted, isNull(text) { throw noValue(line: line) }
        guard !text.isEmpty else {
            throw ScenesDirectory.Problem(line: line, "scenes.directory: the path is empty")
        }
        guard text.hasPrefix("/") else {
            throw ScenesDirectory.Problem(
                line: line, "scenes.directory: \"\(text)\" is not an absolute path (paths in the file must be absolute)"
            )
        }
        return ConfigurationPath.normalized(text)
    }

    /// YAML's plain nulls.
    private static func isNull(_ text: String) -> Bool {
        ["", "~", "null", "Null", "NULL"].contains(text)
    }

    private static func noValue(line: Int) -> ScenesDirectory.Problem {
        ScenesDirectory.Problem(
            line: line, "scenes.directory has no value; give one, or comment the line out to use the default")
    }

    private static func notSingle(line: Int) -> ScenesDirectory.Problem {
        ScenesDirectory.Problem(line: line, "scenes.directory: expected a single value, not a list or a mapping")
    }
}
