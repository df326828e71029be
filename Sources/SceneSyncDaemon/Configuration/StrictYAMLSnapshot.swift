import Configuration
import Yams

/// The configuration file's snapshot: swift-configuration's ``YAMLSnapshot`` for the values, plus the checks it
/// does not make.
///
/// `YAMLSnapshot` answers lookups of known keys and never lists the others, so a misspelt key would silently be a
/// default; nor does it tell a quoted scalar from a plain one, which `socket.mode` needs. This type parses the same
/// bytes with Yams first (the parser `YAMLSnapshot` itself uses, declared as a direct dependency for that reason),
/// rejects anything that is not a known key with a usable value, and remembers each key's line for later errors. It
/// plugs into `FileProvider` like any snapshot, so the file is read once and by swift-configuration.
final class StrictYAMLSnapshot: Sendable {
    /// A problem in the file; the loader prefixes the file's path.
    struct Problem: Error, Equatable {
        var line: Int?
        var column: Int?
        var message: String
    }

    let providerName: String
    /// The line of each key present in the file.
    let lines: [ConfigurationKey: Int]
    /// `nil` for a file without values (empty, or comments only), which `YAMLSnapshot` would reject as not a
    /// mapping.
    private let values: YAMLSnapshot?

    private init(providerName: String, lines: [ConfigurationKey: Int], values: YAMLSnapshot?) {
        self.providerName = providerName
        self.lines = lines
        self.values = values
    }

    /// Checks the document's shape and returns the line of every key in it.
    static func check(_ root: Node?) throws(Problem) -> [ConfigurationKey: Int] {
        guard let root, !isNull(root) else { return [:] }
        guard let mapping = root.mapping else {
            throw Problem(
                line: root.mark?.line,
                message: "the file must be a mapping of sections (scenes:, state:, socket:, …)"
            )
        }
        var lines: [ConfigurationKey: Int] = [:]
        for (sectionNode, sectionValue) in mapping {
            let section = try name(of: sectionNode)
            guard ConfigurationKey.sections.contains(section) else {
                let message =
                    ConfigurationKey(rawValue: section) != nil
                    ? "write \(section) nested, as \(section.prefix { $0 != "." }): with the key indented below it"
                    : "unknown section \(section)"
                        + ConfigurationKey.suggestion(for: section, among: ConfigurationKey.sections)
                throw Problem(line: sectionNode.mark?.line, message: message)
            }
            if isNull(sectionValue) { continue }  // A section whose keys are all commented out.
            guard let entries = sectionValue.mapping else {
                throw Problem(
                    line: sectionValue.mark?.line,
                    message: "\(section): expected a mapping of keys, not a single value or a list"
                )
            }
            for (keyNode, value) in entries {
                let name = "\(section).\(try Self.name(of: keyNode))"
                guard let key = ConfigurationKey(rawValue: name) else {
                    throw Problem(
                        line: keyNode.mark?.line,
                        message: "unknown key \(name)"
                            + ConfigurationKey.suggestion(for: name, among: ConfigurationKey.allCases.map(\.rawValue))
                    )
                }
                lines[key] = keyNode.mark?.line
                try checkValue(value, of: key, line: keyNode.mark?.line)
            }
        }
        return lines
    }

    private static func checkValue(_ value: Node, of key: ConfigurationKey, line: Int?) throws(Problem) {
        if isNull(value) {
            throw Problem(
                line: line,
                message: "\(key.rawValue) has no value; give one, or comment the line out to use the default"
            )
        }
        switch (key.kind, value) {
        case (.ids, .sequence(let items)):
            guard items.allSatisfy({ $0.scalar != nil }) else {
                throw Problem(line: line, message: "\(key.rawValue): expected a list of numeric IDs, like [1000, 1001]")
            }
        case (.patterns, .sequence(let items)):
            guard items.allSatisfy({ $0.scalar != nil }) else {
                throw Problem(line: line, message: "\(key.rawValue): expected a list of scene patterns, like [\"*\"]")
            }
        case (.patterns, _):
            throw Problem(line: line, message: "\(key.rawValue): expected a list of scene patterns, like [\"*\"]")
        case (.ids, _):
            throw Problem(line: line, message: "\(key.rawValue): expected a list of numeric IDs, like [1000, 1001]")
        case (.mode, .scalar(let scalar)):
            if scalar.style == .plain, let number = Int.construct(from: scalar) {
                throw Problem(
                    line: line,
                    message: "\(key.rawValue): quote the mode, as \"\(scalar.string)\": YAML reads an unquoted "
                        + "\(scalar.string) as the number \(number)"
                )
            }
        case (_, .scalar):
            break
        default:
            throw Problem(line: line, message: "\(key.rawValue): expected a single value, not a list or a mapping")
        }
    }

    private static func name(of node: Node) throws(Problem) -> String {
        guard let scalar = node.scalar, !isNull(node) else {
            throw Problem(line: node.mark?.line, message: "a key must be a plain name")
        }
        return scalar.string
    }

    private static func isNull(_ node: Node) -> Bool {
        node.scalar != nil && node.tag.rawValue == Tag.Name.null.rawValue
    }

    /// A Yams error as one line with its position.
    static func problem(_ error: YamlError) -> Problem {
        switch error {
        case .scanner(let context, let problem, let mark, _), .parser(let context, let problem, let mark, _),
            .composer(let context, let problem, let mark, _):
            let during = context.map { " (\(oneLine($0.text)) at line \($0.mark.line))" } ?? ""
            return Problem(line: mark.line, column: mark.column, message: "invalid YAML: \(oneLine(problem))\(during)")
        case .duplicatedKeysInMapping(let duplicates, let context):
            return Problem(
                line: context.mark.line,
                message: "invalid YAML: \(duplicates.sorted().joined(separator: ", ")) appears twice in one mapping"
            )
        default:
            return Problem(message: "invalid YAML: \(oneLine(error.description))")
        }
    }

    private static func oneLine(_ text: String) -> String {
        text.split(whereSeparator: \.isNewline).joined(separator: " ")
    }
}

extension StrictYAMLSnapshot: FileConfigSnapshot {
    typealias ParsingOptions = YAMLSnapshot.ParsingOptions

    convenience init(data: RawSpan, providerName: String, parsingOptions: ParsingOptions) throws {
        let text = data.withUnsafeBytes { String(validating: $0, as: UTF8.self) }
        guard let text else { throw Problem(message: "the file is not UTF-8 text") }
        let root: Node?
        do {
            root = try Parser(yaml: text).singleRoot()
        } catch let error as YamlError {
            throw Self.problem(error)
        }
        let lines = try Self.check(root)
        let values =
            root.map { !Self.isNull($0) } ?? false
            ? try YAMLSnapshot(data: data, providerName: providerName, parsingOptions: parsingOptions) : nil
        self.init(providerName: providerName, lines: lines, values: values)
    }
}

extension StrictYAMLSnapshot: ConfigSnapshot {
    func value(forKey key: AbsoluteConfigKey, type: ConfigType) throws -> LookupResult {
        guard let values else { return LookupResult(encodedKey: key.description, value: nil) }
        return try values.value(forKey: key, type: type)
    }
}

extension StrictYAMLSnapshot: CustomStringConvertible, CustomDebugStringConvertible {
    var description: String { values?.description ?? "\(providerName)[empty]" }
    var debugDescription: String { values?.debugDescription ?? "\(providerName)[empty]" }
}
