/// One figure of a result: a column of the human table and a member of the JSON object.
struct Field {
    /// Column title; empty for figures that only go to JSON.
    let column: String
    let key: String
    let text: String
    let json: String

    static func int(_ column: String, _ key: String, _ value: Int) -> Field {
        Field(column: column, key: key, text: String(value), json: String(value))
    }

    static func number(_ column: String, _ key: String, _ value: Double, _ decimals: Int) -> Field {
        let text = value.isFinite ? fixed(value, decimals) : "null"
        return Field(column: column, key: key, text: value.isFinite ? text : "–", json: text)
    }

    static func string(_ column: String, _ key: String, _ value: String) -> Field {
        var json: [UInt8] = [UInt8(ascii: "\"")]
        for byte in value.utf8 {
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { json.append(UInt8(ascii: "\\")) }
            json.append(byte >= 0x20 ? byte : UInt8(ascii: " "))
        }
        json.append(UInt8(ascii: "\""))
        return Field(column: column, key: key, text: value, json: String(decoding: json, as: UTF8.self))
    }

    static func bool(_ column: String, _ key: String, _ value: Bool) -> Field {
        Field(column: column, key: key, text: value ? "yes" : "no", json: value ? "true" : "false")
    }

    /// The same figure, JSON only.
    var jsonOnly: Field { Field(column: "", key: key, text: text, json: json) }
}

/// Prints results as a human table (a header whenever the columns change) or, with `--json`, one JSON object per
/// result, each carrying its scenario, so that runs can be compared by a script.
final class ResultTable {
    let scenario: String
    let json: Bool
    private var columns: [String] = []

    init(scenario: String, json: Bool) {
        self.scenario = scenario
        self.json = json
    }

    /// A line of context for the human reader (machine load, daemon, parameters); JSON output skips it.
    func note(_ text: String) {
        if !json { print(text) }
    }

    func row(_ fields: [Field]) {
        if json {
            let members = fields.map { #""\#($0.key)":\#($0.json)"# }
            print(#"{"scenario":"\#(scenario)","# + members.joined(separator: ",") + "}")
            return
        }
        let shown = fields.filter { !$0.column.isEmpty }
        let titles = shown.map(\.column)
        if titles != columns {
            columns = titles
            print("")
            print(shown.enumerated().map { cell($1.column, $0) }.joined())
        }
        print(shown.enumerated().map { cell($1.text, $0, $1.column) }.joined())
    }

    /// Columns whose values are wider than their titles (the comparison table's).
    private static let minimumWidths = ["figure": 44, "target": 8, "peer": 15]

    /// The first column is left-aligned, the others right-aligned and at least as wide as their title.
    private func cell(_ text: String, _ index: Int, _ title: String? = nil) -> String {
        let name = title ?? text
        let width = max(name.count, Self.minimumWidths[name] ?? 8) + 2
        return index == 0 ? pad(text, max(width, 19)) : lpad(text, width)
    }
}
